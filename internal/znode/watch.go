package znode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/zpath"
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
		return context.Cause(ctx)
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

// MaxDataSize is the most node data a recipe accepts: ZooKeeper refuses a
// request larger than its jute.maxbuffer (by default 1 MiB - 1 byte), and the
// request carries the path and ACL too, for which 1 KiB is kept back.
const MaxDataSize = 1<<20 - 1<<10

// DefaultData identifies this process: "host:pid".
func DefaultData() []byte {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return fmt.Appendf(nil, "%s:%d", host, os.Getpid())
}

// CheckArgs checks what every recipe constructor is given: a session (a
// *recipes.Session, of which only whether it is nil is checked), a valid
// path, and data within MaxDataSize (DefaultData if not set). It returns its
// own copy of the data. Its errors wrap invalid, the recipe
// package's own sentinel.
func CheckArgs[S any](sess *S, path string, data []byte, dataSet bool, invalid error) ([]byte, error) {
	if sess == nil {
		return nil, fmt.Errorf("%w: nil session", invalid)
	}
	if err := zpath.Validate(path); err != nil {
		return nil, fmt.Errorf("%w: %w", invalid, err)
	}
	if !dataSet {
		data = DefaultData()
	}
	if len(data) > MaxDataSize {
		return nil, fmt.Errorf("%w: node data is %d bytes, more than MaxDataSize (%d)", invalid, len(data), MaxDataSize)
	}
	// A copy, as Curator makes (CURATOR-140): the caller may reuse its
	// buffer, and every node the recipe creates must carry what was given.
	return bytes.Clone(data), nil
}
