package seqnode

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/znode"
)

// Release deletes our node, retrying across connection loss until ZooKeeper
// confirms it is gone, and ends the turn. If ctx ends first, the session
// finishes the delete in the background and Release returns ctx's cause.
//
// If the turn had been lost (noticed or not: the node was already gone when
// the delete reached it, or the session has ended), the turn ends with the
// loss, not with ErrReleased, and Release returns it: once Release has begun
// the watcher reports nothing (the events it sees may be the delete's own
// doing), so the delete's answer is the last word on the node. The delete is
// sent first and the watcher stopped after, so that a hand-off does not wait
// for the watcher (or a read of our node it has in flight) to end.
func (t *Turn) Release(ctx context.Context) error {
	t.mu.Lock()
	t.releasing.Store(true)
	marks := t.marks
	t.mu.Unlock()
	// Only the first try's "no node" proves the node was gone already:
	// after a retry it may be our own delete, applied before its reply was
	// lost.
	first, gone := true, false
	err := t.sess.Retry(ctx, func(conn *zk.Conn) error {
		var err error
		if len(marks) > 0 {
			err = deleteMarked(conn, t.path, marks, t.sess.ACL())
			if errors.Is(err, zk.ErrConnectionClosed) {
				// Sent again plainly: the marks only spare a waiter
				// a read, and a server with a smaller jute.maxbuffer
				// than the constructor sized for drops the
				// transaction, which carries the path three times.
				marks = nil
			}
		}
		if errors.Is(err, errMarkRefused) {
			marks = nil
		}
		if len(marks) == 0 && !errors.Is(err, zk.ErrConnectionClosed) {
			err = znode.Delete(conn, t.path)
		}
		if errors.Is(err, zk.ErrNoNode) {
			gone, err = first, nil
		}
		first = false
		return err
	})
	switch sessErr := t.sess.Err(); {
	case gone:
		err = fmt.Errorf("%w: node %s was deleted", ErrLost, t.path)
	case err != nil && sessErr != nil && errors.Is(err, sessErr):
		// The session ended while we held: the node died with it, unless
		// the caller's connection (NewSession) kept its ZooKeeper session,
		// which Session.Delete still deletes it on if it can.
		_ = t.sess.Delete(ctx, t.path)
		err = fmt.Errorf("%w: %w", ErrLost, sessErr)
	case err != nil && ctx.Err() != nil:
		// Hand the delete to the session, which goes on in the
		// background.
		err = t.sess.Delete(ctx, t.path)
	}
	if err == nil {
		t.mu.Lock()
		t.released = true
		t.mu.Unlock()
	}
	t.stop()
	t.wg.Wait()
	why := ErrReleased
	if errors.Is(err, ErrLost) {
		why = err
	}
	if earlier, first := t.ended.fire(why); !first {
		return earlier
	}
	return err
}
