package seqnode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/zpath"
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
}

func watchOwn(ctx context.Context, sess *recipes.Session, path string) ownWatch {
	var w ownWatch
	w.err = sess.Retry(ctx, func(conn *zk.Conn) error {
		var err error
		w.data, w.stat, w.events, err = conn.GetW(path)
		return err
	})
	return w
}

// await lists the directory and waits until the predicate says we hold. The
// listing is read once: nodes created after ours sort after ours and cannot
// block us, so when the watched node goes we apply that to what we know and
// ask the predicate again. A hand-off therefore costs the holder's delete and
// one notification, with no read in between.
func await(ctx context.Context, sess *recipes.Session, spec Spec, path string, wait bool) (*Hold, error) {
	name := zpath.Base(path)
	// Watch our own node and list its siblings at once: two requests in
	// flight, one round trip.
	ownc := make(chan ownWatch, 1)
	go func() { ownc <- watchOwn(ctx, sess, path) }()
	nodes, listErr := list(ctx, sess, spec)
	own := <-ownc
	switch {
	case errors.Is(own.err, zk.ErrNoNode):
		return nil, errRequeue
	case own.err != nil:
		return nil, fmt.Errorf("locks: watch %s: %w", path, own.err)
	case listErr != nil:
		return nil, listErr
	case own.stat.EphemeralOwner != sess.ID():
		return nil, fmt.Errorf("locks: node %s belongs to session %#x, not ours (%#x): %w",
			path, own.stat.EphemeralOwner, sess.ID(), recipes.ErrSessionExpired)
	}
	revoked := bytes.Equal(own.data, RevokeData)
	for {
		ours := Index(nodes, name)
		if ours < 0 {
			return nil, errRequeue
		}
		holds, w := spec.Holds(nodes, ours)
		if holds {
			return newHold(sess, path, own, revoked), nil
		}
		if !wait {
			return nil, nil
		}
		target := zpath.Join(spec.Dir, nodes[w].Name)
		var ev <-chan zk.Event
		err := sess.Retry(ctx, func(conn *zk.Conn) error {
			var err error
			_, _, ev, err = conn.GetW(target)
			return err
		})
		switch {
		case errors.Is(err, zk.ErrNoNode):
			// Gone before we could watch it.
		case err != nil:
			return nil, fmt.Errorf("locks: watch %s: %w", target, err)
		default:
			gone, err := waitGone(ctx, sess, path, ev, &own, &revoked)
			if err != nil {
				return nil, err
			}
			if !gone {
				continue // its data changed; watch it again
			}
		}
		if spec.Relist {
			if nodes, err = list(ctx, sess, spec); err != nil {
				return nil, err
			}
		} else {
			nodes = slices.Delete(nodes, w, w+1)
		}
	}
}

// waitGone waits on the watched node and reports whether it was deleted
// (false: its data changed, which spends the watch). Meanwhile it keeps the
// watch on our own node: a revocation request is noted and the watch re-armed;
// the deletion of our node means requeue.
func waitGone(ctx context.Context, sess *recipes.Session, path string, ev <-chan zk.Event, own *ownWatch, revoked *bool) (bool, error) {
	for {
		select {
		case e := <-ev:
			switch e.Type {
			case zk.EventNodeDeleted:
				return true, nil
			case zk.EventNotWatching:
				return false, sessionErr(sess, e.Err)
			}
			return false, nil
		case e := <-own.events:
			switch e.Type {
			case zk.EventNodeDeleted:
				return false, errRequeue
			case zk.EventNotWatching:
				return false, sessionErr(sess, e.Err)
			}
			*own = watchOwn(ctx, sess, path)
			switch {
			case errors.Is(own.err, zk.ErrNoNode):
				return false, errRequeue
			case own.err != nil:
				return false, fmt.Errorf("locks: watch %s: %w", path, own.err)
			}
			*revoked = *revoked || bytes.Equal(own.data, RevokeData)
		case <-sess.Done():
			return false, sess.Err()
		case <-ctx.Done():
			return false, context.Cause(ctx)
		}
	}
}

// list reads the children of the lock directory in lock order. A missing
// directory (a reaped container) has no children.
func list(ctx context.Context, sess *recipes.Session, spec Spec) ([]Node, error) {
	var names []string
	err := sess.Retry(ctx, func(conn *zk.Conn) error {
		var err error
		names, _, err = conn.Children(spec.Dir)
		return ignoreNoNode(err)
	})
	if err != nil {
		return nil, fmt.Errorf("locks: list %s: %w", spec.Dir, err)
	}
	return ParseAll(names, spec.siblings()...), nil
}

// sessionErr is the error for a watch that ZooKeeper stopped: the session's
// own error when it has one.
func sessionErr(sess *recipes.Session, err error) error {
	if serr := sess.Err(); serr != nil {
		return serr
	}
	if err == nil {
		err = zk.ErrClosing
	}
	return fmt.Errorf("locks: watch dropped: %w", err)
}
