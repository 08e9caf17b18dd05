package seqnode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
)

// Errors a Hold ends with. The locks package re-exports them.
var (
	ErrLost     = errors.New("locks: lock lost")
	ErrReleased = errors.New("locks: released")
)

// A Hold is one node that holds its lock. It watches its own node from the
// moment it was created: it ends, with an error wrapping ErrLost, when the
// node is deleted by anyone else or the session ends; and it notes every
// revocation request written into the node.
type Hold struct {
	sess    *recipes.Session
	path    string
	token   int64
	done    chan struct{} // closed when the hold ends
	revoked chan struct{} // closed at the first revocation request
	stop    context.CancelFunc
	wg      sync.WaitGroup // joins the watcher

	mu            sync.Mutex // guards err, revokedClosed and onEnd
	err           error
	revokedClosed bool
	onEnd         []func(error)
}

func newHold(sess *recipes.Session, path string, own ownWatch, revoked bool) *Hold {
	ctx, stop := context.WithCancel(context.Background())
	h := &Hold{
		sess:    sess,
		path:    path,
		token:   own.stat.Czxid,
		done:    make(chan struct{}),
		revoked: make(chan struct{}),
		stop:    stop,
	}
	if revoked {
		h.revoke()
	}
	h.wg.Add(1)
	go h.watch(ctx, own.events)
	return h
}

// Path is the full path of the node that holds the lock.
func (h *Hold) Path() string { return h.path }

// Token is the fencing token: the zxid that created the node. ZooKeeper
// zxids only grow, and a holder's node is created after its predecessor's,
// so every later holder of the lock has a larger token.
func (h *Hold) Token() int64 { return h.token }

// Done is closed when the hold ends: lost, or released.
func (h *Hold) Done() <-chan struct{} { return h.done }

// Err is nil while the hold lasts; then it wraps ErrLost or is ErrReleased.
func (h *Hold) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// Revoked is closed when someone asks the holder to let go by writing
// RevokeData into its node (Curator's Revoker). Nothing is released for it.
func (h *Hold) Revoked() <-chan struct{} { return h.revoked }

// Guard is a check to put first in a zk.Multi: the transaction fails unless
// our node still exists, that is, unless we still hold the lock.
func (h *Hold) Guard() *zk.CheckVersionRequest {
	return &zk.CheckVersionRequest{Path: h.path, Version: -1}
}

// OnEnd arranges for f to be called once with the hold's error when it ends,
// at once if it has ended already. f runs on the goroutine that ends the hold
// and must not block.
func (h *Hold) OnEnd(f func(error)) {
	h.mu.Lock()
	err := h.err
	if err == nil {
		h.onEnd = append(h.onEnd, f)
	}
	h.mu.Unlock()
	if err != nil {
		f(err)
	}
}

// end records why the hold ended, once, and returns the error it ended with
// earlier, if it had.
func (h *Hold) end(err error) error {
	h.mu.Lock()
	if h.err != nil {
		defer h.mu.Unlock()
		return h.err
	}
	h.err = err
	close(h.done)
	callbacks := h.onEnd
	h.onEnd = nil
	h.mu.Unlock()
	for _, f := range callbacks {
		f(err)
	}
	return nil
}

func (h *Hold) revoke() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.revokedClosed {
		h.revokedClosed = true
		close(h.revoked)
	}
}

func (h *Hold) lost(cause error) {
	h.end(fmt.Errorf("%w: %w", ErrLost, cause))
}

// watch follows our node until the hold is released or lost.
func (h *Hold) watch(ctx context.Context, events <-chan zk.Event) {
	defer h.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.sess.Done():
			h.lost(h.sess.Err())
			return
		case e := <-events:
			switch e.Type {
			case zk.EventNodeDeleted:
				h.lost(fmt.Errorf("node %s was deleted", h.path))
				return
			case zk.EventNotWatching:
				h.lost(sessionErr(h.sess, e.Err))
				return
			}
			// The data changed: read it, which arms the watch again.
			own := watchOwn(ctx, h.sess, h.path)
			switch {
			case ctx.Err() != nil:
				return
			case errors.Is(own.err, zk.ErrNoNode):
				h.lost(fmt.Errorf("node %s was deleted", h.path))
				return
			case own.err != nil:
				h.lost(own.err)
				return
			}
			if bytes.Equal(own.data, RevokeData) {
				h.revoke()
			}
			events = own.events
		}
	}
}

// Release deletes our node, retrying across connection loss until ZooKeeper
// confirms it is gone, and ends the hold. If ctx ends first, the session
// finishes the delete in the background and Release returns ctx's cause. If
// the hold had already been lost, Release still removes what is left and
// returns the loss.
func (h *Hold) Release(ctx context.Context) error {
	h.stop()
	h.wg.Wait()
	err := h.sess.Delete(ctx, h.path)
	if sessErr := h.sess.Err(); sessErr != nil && err != nil && errors.Is(err, sessErr) {
		// The session ended while we held: the node died with it.
		err = fmt.Errorf("%w: %w", ErrLost, sessErr)
	}
	if earlier := h.end(ErrReleased); earlier != nil {
		return earlier
	}
	return err
}
