package seqnode

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/znode"
)

func (t *Turn) lost(cause error) {
	t.end(fmt.Errorf("%w: %w", ErrLost, cause))
}

// lostUnlessReleasing ends the turn as lost, unless Release has begun: then
// the delete's answer says how the turn ended (the event may be that
// delete's own doing).
func (t *Turn) lostUnlessReleasing(cause error) {
	if !t.releasing.Load() {
		t.lost(cause)
	}
}

// lostUnlessReleased ends the turn as lost when the session ends, unless
// Release's delete was confirmed first: a session's end is never that
// delete's doing, and a Release whose delete waits on a dead connection must
// not keep the turn's end from its holder.
func (t *Turn) lostUnlessReleased(cause error) {
	t.mu.Lock()
	released := t.released
	t.mu.Unlock()
	if !released {
		t.lost(cause)
	}
}

// follow follows our node until the turn is released or lost.
func (t *Turn) follow(ctx context.Context, events <-chan zk.Event, dataWatch bool) {
	defer t.wg.Done()
	toData := t.toData
	if dataWatch {
		toData = nil
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.sess.Done():
			t.lostUnlessReleased(t.sess.Err())
			return
		case <-toData:
		case e := <-events:
			switch {
			case t.releasing.Load():
				return // our own delete's doing, perhaps: it has the last word
			case e.Type == zk.EventNotWatching:
				t.lost(znode.WatchStopped(t.sess, e.Err))
				return
			case dataWatch && e.Type == zk.EventNodeDeleted:
				t.lost(fmt.Errorf("node %s was deleted", t.path))
				return
			}
			// The data changed, or the directory did: read our node,
			// which (re)arms the data watch.
		}
		var ok bool
		if events, ok = t.rewatch(ctx); !ok {
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
func (t *Turn) rewatch(ctx context.Context) (<-chan zk.Event, bool) {
	type read struct {
		events <-chan zk.Event
		ok     bool
	}
	done := make(chan read, 1)
	t.wg.Go(func() {
		events, ok := t.watchData(ctx)
		done <- read{events, ok}
	})
	select {
	case r := <-done:
		return r.events, r.ok
	case <-t.sess.Done():
		t.lostUnlessReleased(t.sess.Err())
		return nil, false
	}
}

// watchData reads our node with a data watch; false means the watcher is done.
func (t *Turn) watchData(ctx context.Context) (<-chan zk.Event, bool) {
	own := watchOwn(ctx, t.sess, t.path)
	switch {
	case ctx.Err() != nil:
		return nil, false
	case errors.Is(own.err, zk.ErrNoNode):
		t.lostUnlessReleasing(fmt.Errorf("node %s was deleted", t.path))
		return nil, false
	case own.err != nil:
		t.lostUnlessReleasing(own.err)
		return nil, false
	}
	// A token known already stays: the listing that showed we hold may
	// have proved a later zxid than our node's creation (tokenFromListing),
	// and a turn's token never changes while it lasts.
	t.setTokenIfUnknown(own.stat.Czxid)
	if bytes.Equal(own.data, RevokeData) {
		t.revoke()
	}
	return own.events, true
}
