package znode

import (
	"context"

	"github.com/go-zookeeper/zk"
)

// The reads every recipe makes, each over Session.Retry: they return what
// they read instead of leaving each caller to capture it from a closure, and
// a refusal names the node (Denied).

// retry runs op, a read of the node at path, over sess.Retry and returns
// the result of the call that settled it. A refusal names the node.
func retry[T any](ctx context.Context, sess Session, path string, op func(conn *zk.Conn) (T, error)) (T, error) {
	var v T
	err := sess.Retry(ctx, func(conn *zk.Conn) error {
		var err error
		if v, err = op(conn); err != nil {
			return RefusedRead(err, path)
		}
		return nil
	})
	return v, err
}

// read is one node's data or children, its stat and, for a watched read,
// its watch.
type read[T any] struct {
	v      T
	stat   *zk.Stat
	events <-chan zk.Event
}

// Exists reports whether the node at path exists.
func Exists(ctx context.Context, sess Session, path string) (bool, error) {
	return retry(ctx, sess, path, func(conn *zk.Conn) (bool, error) {
		ok, _, err := conn.Exists(path)
		return ok, err
	})
}

// Stat returns the stat of the node at path, or nil if it does not exist.
func Stat(ctx context.Context, sess Session, path string) (*zk.Stat, error) {
	return retry(ctx, sess, path, func(conn *zk.Conn) (*zk.Stat, error) {
		ok, st, err := conn.Exists(path)
		if !ok {
			st = nil
		}
		return st, err
	})
}

// ExistsW reports whether the node at path exists and watches it: the watch
// fires when it is created, changed or deleted.
func ExistsW(ctx context.Context, sess Session, path string) (bool, <-chan zk.Event, error) {
	r, err := retry(ctx, sess, path, func(conn *zk.Conn) (read[bool], error) {
		ok, _, ev, err := conn.ExistsW(path)
		return read[bool]{v: ok, events: ev}, err
	})
	return r.v, r.events, err
}

// Get reads the node at path. A missing node is zk.ErrNoNode.
func Get(ctx context.Context, sess Session, path string) ([]byte, *zk.Stat, error) {
	r, err := retry(ctx, sess, path, func(conn *zk.Conn) (read[[]byte], error) {
		data, st, err := conn.Get(path)
		return read[[]byte]{v: data, stat: st}, err
	})
	return r.v, r.stat, err
}

// GetW reads the node at path and watches its data: the watch fires when
// the node is changed or deleted. A missing node is zk.ErrNoNode.
func GetW(ctx context.Context, sess Session, path string) ([]byte, *zk.Stat, <-chan zk.Event, error) {
	r, err := retry(ctx, sess, path, func(conn *zk.Conn) (read[[]byte], error) {
		data, st, ev, err := conn.GetW(path)
		return read[[]byte]{data, st, ev}, err
	})
	return r.v, r.stat, r.events, err
}

// Children lists the children of the node at path, in no order. A missing
// node (a reaped container, say) has none.
func Children(ctx context.Context, sess Session, path string) ([]string, error) {
	return retry(ctx, sess, path, func(conn *zk.Conn) ([]string, error) {
		names, _, err := conn.Children(path)
		return names, IgnoreNoNode(err)
	})
}

// ChildrenStat lists the children of the node at path with its stat. A
// missing node is zk.ErrNoNode.
func ChildrenStat(ctx context.Context, sess Session, path string) ([]string, *zk.Stat, error) {
	r, err := retry(ctx, sess, path, func(conn *zk.Conn) (read[[]string], error) {
		names, st, err := conn.Children(path)
		return read[[]string]{v: names, stat: st}, err
	})
	return r.v, r.stat, err
}

// ChildrenW lists the children of the node at path and watches them: the
// watch fires when one is added or removed, or the node is deleted. A
// missing node is zk.ErrNoNode.
func ChildrenW(ctx context.Context, sess Session, path string) ([]string, *zk.Stat, <-chan zk.Event, error) {
	r, err := retry(ctx, sess, path, func(conn *zk.Conn) (read[[]string], error) {
		names, st, ev, err := conn.ChildrenW(path)
		return read[[]string]{names, st, ev}, err
	})
	return r.v, r.stat, r.events, err
}

// DeleteDetached deletes the node at path (Session.Delete) on a context of
// its own, bounded by the session timeout: for cleanup after a caller's
// context has ended, which must not cut it short. If the session cannot
// reach ZooKeeper in that time, it goes on deleting in the background.
func DeleteDetached(sess Session, path string) error {
	ctx, cancel := context.WithTimeout(context.Background(), sess.Timeout())
	defer cancel()
	return sess.Delete(ctx, path)
}
