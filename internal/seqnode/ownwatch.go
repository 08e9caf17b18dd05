package seqnode

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/znode"
)

// RevokeData is what Curator's Revoker writes into a node to ask its holder to
// let go.
var RevokeData = []byte("__REVOKE__")

// ownWatch is a read of our own node that leaves a data watch on it: the
// watch fires when the node is deleted (loss) or its data changes
// (revocation request).
type ownWatch struct {
	data   []byte
	stat   *zk.Stat
	events <-chan zk.Event
	err    error
	epoch  int64 // the session's Disconnects before the read was sent
	exact  bool  // the session can count its lost connections
}

func watchOwn(ctx context.Context, sess znode.Session, path string) ownWatch {
	var w ownWatch
	w.epoch, w.exact = sess.Disconnects()
	w.data, w.stat, w.events, w.err = znode.GetW(ctx, sess, path)
	return w
}

// countsDisconnects reports whether the session counts its lost
// connections: without that, no fast hand-off is trusted (ownWatch.current).
func countsDisconnects(sess znode.Session) bool {
	_, ok := sess.Disconnects()
	return ok
}

// current reports whether no connection was lost since the watch was set
// (true for a bare waiter, which has none): then ZooKeeper sent its events,
// and those of every watch set after it, over one connection, in order, so
// a deletion of our node that came before a notification we got is here
// already. After a reconnect go-zookeeper sets the watches again in a
// request of its own, which requests sent meanwhile can overtake: a watch set
// by one of those could then report a later change before ours reports our
// node gone.
func (w *ownWatch) current(sess znode.Session) bool {
	if w == nil {
		return true
	}
	n, ok := sess.Disconnects()
	return ok && w.exact && n == w.epoch
}

// waiting is the error that ends a wait for this read of our own node at
// path: errRequeue if it is gone (someone deleted it), the read's error, or
// nil.
func (w ownWatch) waiting(path string) error {
	switch {
	case errors.Is(w.err, zk.ErrNoNode):
		return errRequeue
	case w.err != nil:
		return fmt.Errorf("watch %s: %w", path, w.err)
	}
	return nil
}

// handle applies an event of our own node's watch: its deletion means
// requeue (someone deleted it); a data change (a revocation request: see
// revokes) has the node read and watched again.
func (w *ownWatch) handle(ctx context.Context, sess znode.Session, path string, e zk.Event) error {
	gone, err := deleted(sess, e)
	if gone {
		return errRequeue
	}
	if err != nil {
		return err
	}
	*w = watchOwn(ctx, sess, path)
	return w.waiting(path)
}

// settle handles an event of our own node's watch that has come but not
// been read, without waiting for one.
func (w *ownWatch) settle(ctx context.Context, sess znode.Session, path string) error {
	if w == nil {
		return nil
	}
	select {
	case e := <-w.events:
		return w.handle(ctx, sess, path, e)
	default:
		return nil
	}
}

// revokes reports whether the last read of our node found a revocation
// request in it.
func (w *ownWatch) revokes() bool {
	return w != nil && bytes.Equal(w.data, RevokeData)
}

// deleted reads the event of a node's watch: whether the node was deleted,
// or the error of a watch that stopped (the connection or the session
// ended). Any other event (a data change) spent the watch.
func deleted(sess znode.Session, e zk.Event) (bool, error) {
	switch e.Type {
	case zk.EventNodeDeleted:
		return true, nil
	case zk.EventNotWatching:
		return false, znode.WatchStopped(sess, e.Err)
	}
	return false, nil
}
