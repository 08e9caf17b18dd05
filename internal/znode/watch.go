package znode

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// WaitEvent waits for one event on a watch channel: any event means "look
// again", except that ZooKeeper stopped the watch (WatchStopped's error). It
// also returns when the session or ctx ends.
func WaitEvent(ctx context.Context, sess Session, ev <-chan zk.Event) error {
	select {
	case e := <-ev:
		if e.Type == zk.EventNotWatching {
			return WatchStopped(sess, e.Err)
		}
		return nil
	case <-sess.Done():
		return sess.Err()
	case <-ctx.Done():
		return CtxErr(ctx)
	}
}

// AwaitExists waits until the node at path exists, or, with want false,
// until it does not. ev, if not nil, is the watch of an ExistsW that found
// the node not yet as wanted; if nil, AwaitExists starts by looking. It
// returns WaitEvent's errors, or a read's.
func AwaitExists(ctx context.Context, sess Session, path string, want bool, ev <-chan zk.Event) error {
	for {
		if ev == nil {
			exists, watch, err := ExistsW(ctx, sess, path)
			if err != nil || exists == want {
				return err
			}
			ev = watch
		}
		if err := WaitEvent(ctx, sess, ev); err != nil {
			return err
		}
		ev = nil
	}
}

// WatchStopped is the error for a watch that go-zookeeper stopped (with
// err): the session's own error when it has one.
func WatchStopped(sess Session, err error) error {
	if serr := sess.Err(); serr != nil {
		return serr
	}
	if errors.Is(err, zk.ErrSessionExpired) {
		// go-zookeeper told the watch before the session heard.
		return ErrSessionExpired
	}
	if err == nil {
		err = zk.ErrClosing
	}
	return fmt.Errorf("watch dropped: %w", err)
}
