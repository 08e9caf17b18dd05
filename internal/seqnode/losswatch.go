package seqnode

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/znode"
)

func (h *Turn) lost(cause error) {
	h.end(fmt.Errorf("%w: %w", ErrLost, cause))
}

// lostUnlessReleasing ends the turn as lost, unless Release has begun: then
// the delete's answer says how the turn ended (the event may be that
// delete's own doing).
func (h *Turn) lostUnlessReleasing(cause error) {
	if !h.isReleasing() {
		h.lost(cause)
	}
}

// lostUnlessReleased ends the turn as lost when the session ends, unless
// Release's delete was confirmed first: a session's end is never that
// delete's doing, and a Release whose delete waits on a dead connection must
// not keep the turn's end from its holder.
func (h *Turn) lostUnlessReleased(cause error) {
	h.mu.Lock()
	released := h.released
	h.mu.Unlock()
	if !released {
		h.lost(cause)
	}
}

func (h *Turn) isReleasing() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.releasing
}

// follow follows our node until the turn is released or lost.
func (h *Turn) follow(ctx context.Context, events <-chan zk.Event, dataWatch bool) {
	defer h.wg.Done()
	toData := h.toData
	if dataWatch {
		toData = nil
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.sess.Done():
			h.lostUnlessReleased(h.sess.Err())
			return
		case <-toData:
		case e := <-events:
			switch {
			case h.isReleasing():
				return // our own delete's doing, perhaps: it has the last word
			case e.Type == zk.EventNotWatching:
				h.lost(znode.WatchStopped(h.sess, e.Err))
				return
			case dataWatch && e.Type == zk.EventNodeDeleted:
				h.lost(fmt.Errorf("node %s was deleted", h.path))
				return
			}
			// The data changed, or the directory did: read our node,
			// which (re)arms the data watch.
		}
		var ok bool
		if events, ok = h.rewatch(ctx); !ok {
			return
		}
		dataWatch, toData = true, nil
	}
}

// rewatch runs watchData on a goroutine of its own and waits for it, or for
// the session's end: the read may wait on a dead connection (a borrowed one,
// until go-zookeeper gives up) when the session ends, and the turn must end
// then all the same. The watcher is a turn's only goroutine otherwise: one
// per turn, not two, is measurably faster under contention.
func (h *Turn) rewatch(ctx context.Context) (<-chan zk.Event, bool) {
	type read struct {
		events <-chan zk.Event
		ok     bool
	}
	done := make(chan read, 1)
	h.wg.Go(func() {
		events, ok := h.watchData(ctx)
		done <- read{events, ok}
	})
	select {
	case r := <-done:
		return r.events, r.ok
	case <-h.sess.Done():
		h.lostUnlessReleased(h.sess.Err())
		return nil, false
	}
}

// watchData reads our node with a data watch; false means the watcher is done.
func (h *Turn) watchData(ctx context.Context) (<-chan zk.Event, bool) {
	own := watchOwn(ctx, h.sess, h.path)
	switch {
	case ctx.Err() != nil:
		return nil, false
	case errors.Is(own.err, zk.ErrNoNode):
		h.lostUnlessReleasing(fmt.Errorf("node %s was deleted", h.path))
		return nil, false
	case own.err != nil:
		h.lostUnlessReleasing(own.err)
		return nil, false
	}
	// A token known already stays: the listing that showed we hold may
	// have proved a later zxid than our node's creation (tokenFromListing),
	// and a turn's token never changes while it lasts.
	h.setTokenIfUnknown(own.stat.Czxid)
	if bytes.Equal(own.data, RevokeData) {
		h.revoke()
	}
	return own.events, true
}
