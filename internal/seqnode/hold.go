package seqnode

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/znode"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// Errors a Hold ends with. They are locks.ErrLockLost and locks.ErrReleased:
// declared here, where the holds that end with them can name them, and
// exported by package locks.
var (
	ErrLost     = errors.New("locks: lock lost")
	ErrReleased = errors.New("locks: released")
)

// A Hold is one node that holds its lock. It ends, with an error wrapping
// ErrLost, when the node is deleted by anyone else or the session ends, and
// it notes revocation requests written into the node.
//
// A hold that waited for its lock already watches its own node's data, which
// reports both deletion and revocation. A hold taken at once watches the
// lock directory instead, through the listing that showed it holds: it costs
// no request while nothing else happens there. At the first change in the
// directory, or when Revoked needs it, the hold reads its node once
// and watches its data from then on.
type Hold struct {
	sess    znode.Session
	path    string
	ended   *signal[error]    // the hold ended, with why
	revoked *signal[struct{}] // the first revocation request came
	arm     chan struct{}     // asks the watcher to watch our node's data
	stop    context.CancelFunc
	wg      sync.WaitGroup // joins the watcher and its reads

	mu        sync.Mutex // guards the fields below
	marks     []string   // the marks the release's delete writes (marks.go)
	token     int64      // 0 until known
	armed     bool       // arm has been signalled
	releasing bool       // Release has begun: its delete has the last word
	released  bool       // Release's delete was confirmed
}

// bareHold is the hold of a node that only its recipe uses (a Gate): it
// has no token and watches nothing but the session.
func bareHold(sess znode.Session, path string) *Hold {
	return startHold(sess, path, 0, nil, false, false)
}

// dirHold is the hold of a node that held at its listing: the listing's
// watch on the directory, events, is all it watches until something changes
// there.
func dirHold(sess znode.Session, path string, token int64, events <-chan zk.Event) *Hold {
	return startHold(sess, path, token, events, false, false)
}

// ownHold is the hold of a node that waited: it goes on with the waiter's
// watch of the node's data, and its token is the node's creation zxid.
// revoked says that a revocation request came while it waited.
func ownHold(sess znode.Session, path string, own *ownWatch, revoked bool) *Hold {
	return startHold(sess, path, own.stat.Czxid, own.events, true, revoked)
}

// startHold starts watching: events come from our node's data watch when
// dataWatch is true, else from the directory's child watch.
func startHold(sess znode.Session, path string, token int64, events <-chan zk.Event, dataWatch, revoked bool) *Hold {
	ctx, stop := context.WithCancel(context.Background())
	h := &Hold{
		sess:    sess,
		path:    path,
		token:   token,
		ended:   newSignal[error](),
		revoked: newSignal[struct{}](),
		arm:     make(chan struct{}, 1),
		stop:    stop,
		armed:   dataWatch,
	}
	if revoked {
		h.revoke()
	}
	h.wg.Add(1)
	go h.watch(ctx, events, dataWatch)
	return h
}

// Path is the full path of the node that holds the lock.
func (h *Hold) Path() string { return h.path }

// Name is the name of that node, without its directory.
func (h *Hold) Name() string { return zpath.Base(h.path) }

// Token returns the fencing token: a zxid no earlier than the one that
// created the node (that one, or the directory's pzxid from the listing that
// showed it held: see tokenFromListing), so every later holder of the lock
// has a larger token. Acquire makes sure it is known; a bare hold has none.
func (h *Hold) Token() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.token
}

// readToken reads the token, unless the listing or the watch that made the
// hold showed it already, or the hold is bare.
func (h *Hold) readToken(ctx context.Context, bare bool) error {
	if bare || h.Token() != 0 {
		return nil
	}
	st, err := znode.Stat(ctx, h.sess, h.path)
	switch {
	case err != nil:
		return fmt.Errorf("read %s: %w", h.path, err)
	case st == nil:
		return fmt.Errorf("%w: node %s was deleted", ErrLost, h.path)
	}
	h.setTokenIfUnknown(st.Czxid)
	return nil
}

func (h *Hold) setToken(t int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.token = t
}

func (h *Hold) setTokenIfUnknown(t int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.token == 0 {
		h.token = t
	}
}

// Done is closed when the hold ends: lost, or released.
func (h *Hold) Done() <-chan struct{} { return h.ended.ch }

// Err is nil while the hold lasts; then it wraps ErrLost or is ErrReleased.
func (h *Hold) Err() error {
	err, _ := h.ended.value()
	return err
}

// Revoked returns a channel closed when someone asks the holder to let go by
// writing RevokeData into its node (Curator's Revoker). Nothing is released
// for it. The first call makes sure the node's data is watched, and sees a
// request written before it.
func (h *Hold) Revoked() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.armLocked()
	return h.revoked.ch
}

// OnRevoke arranges for f to be called once at the first revocation request,
// at once if one has come; like Revoked, it makes sure the node's data is
// watched. f must not block.
func (h *Hold) OnRevoke(f func()) {
	h.mu.Lock()
	h.armLocked()
	h.mu.Unlock()
	h.revoked.then(func(struct{}) { f() })
}

// WatchNode has the hold read its node and watch its data now, as Revoked
// does, rather than at the first change in the directory: a read sent beside
// another request of the session shares its round trip, where one sent at
// that change, alone, would cost one of its own.
func (h *Hold) WatchNode() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.armLocked()
}

// Unmarked has the release write no mark of our node, and reports
// whether it can: not once Release has begun, whose delete may have taken
// its marks already. A read/write lock's downgrade calls it before it puts
// a read node at our node's place in the queue, so that a writer behind
// does not take our release for the end of the holds ahead of it. Marks
// owed for nodes ahead are still written.
func (h *Hold) Unmarked() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.releasing {
		return false
	}
	h.marks = slices.DeleteFunc(slices.Clone(h.marks), func(m string) bool { return m == MarkOf(h.path) })
	return true
}

func (h *Hold) armLocked() {
	if !h.armed {
		h.armed = true
		h.arm <- struct{}{}
	}
}

// Guard is a check to put first in a zk.Multi: the transaction fails unless
// our node still exists, that is, unless we still hold the lock.
func (h *Hold) Guard() *zk.CheckVersionRequest {
	return &zk.CheckVersionRequest{Path: h.path, Version: -1}
}

// AfterRevoke arranges for f to be called once at the first revocation
// request that the hold sees, without making it watch for one (as Revoked
// and OnRevoke do). f must not block.
func (h *Hold) AfterRevoke(f func()) { h.revoked.then(func(struct{}) { f() }) }

// OnEnd arranges for f to be called once with the hold's error when it ends,
// at once if it has ended already. f runs on the goroutine that ends the hold
// and must not block.
func (h *Hold) OnEnd(f func(error)) { h.ended.then(f) }

// end records why the hold ended, once, and returns the error it ended with
// earlier, if it had.
func (h *Hold) end(err error) error {
	if earlier, ok := h.ended.fire(err); !ok {
		return earlier
	}
	return nil
}

func (h *Hold) revoke() { h.revoked.fire(struct{}{}) }
