package barriers

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/layout"
	"github.com/zkrecipes/recipes/internal/znode"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// A Barrier holds processes back until it is removed: Curator's
// DistributedBarrier, on the same node. Set puts it up, Remove takes it down,
// and Wait returns once it is down. It is safe for concurrent use.
type Barrier struct {
	sess *recipes.Session
	path string // as given
	dir  string // path in ZooKeeper, under the session's chroot
	data []byte
}

// NewBarrier returns the barrier at path. It does no I/O, and refuses a nil
// session, a malformed path or data over MaxDataSize.
func NewBarrier(sess *recipes.Session, path string, opts ...recipes.NodeOption) (*Barrier, error) {
	data, err := args.Check(sess, path, opts, ErrInvalid)
	if err != nil {
		return nil, err
	}
	return &Barrier{sess: sess, path: path, dir: zpath.Under(sess.Chroot(), path), data: data}, nil
}

// Path returns the barrier's path.
func (b *Barrier) Path() string { return b.path }

// Set puts the barrier up: it creates the barrier's node (persistent, so it
// outlives this session; its missing parents are created as containers). A
// barrier that is already up is not an error. A ctx that has already ended
// gets its cause back, and nothing is created.
func (b *Barrier) Set(ctx context.Context) error {
	// Retry sends nothing for an ended ctx.
	err := b.sess.Retry(ctx, func(conn *zk.Conn) error {
		for {
			_, err := znode.Create(conn, b.dir, zk.FlagPersistent, b.data, b.sess.ACL())
			if !errors.Is(err, zk.ErrNodeExists) {
				return err
			}
			// Up already, unless the node is another recipe's path.
			names, _, err := conn.Children(b.dir)
			if errors.Is(err, zk.ErrNoNode) {
				continue // removed meanwhile: put it up again
			}
			if err != nil {
				return err
			}
			return layout.Check(b.path, names, layout.Barrier, ErrOtherRecipe)
		}
	})
	if err != nil {
		return fmt.Errorf("barriers: set %s: %w", b.path, err)
	}
	return nil
}

// Remove takes the barrier down, releasing every waiter. A barrier that is
// not up is not an error. A ctx that has already ended gets its cause back,
// and the barrier stays as it is.
func (b *Barrier) Remove(ctx context.Context) error {
	err := b.sess.Retry(ctx, func(conn *zk.Conn) error {
		return znode.IgnoreNoNode(conn.Delete(b.dir, -1))
	})
	if err != nil {
		return fmt.Errorf("barriers: remove %s: %w", b.path, err)
	}
	return nil
}

// Wait returns nil once the barrier is down, at once if it is not up. It
// returns ctx's cause if ctx ends first (or has ended already), and the
// session's error if the session ends first (expired, or cut off for the
// session timeout): a waiter that cannot see the barrier is never told it
// has passed.
func (b *Barrier) Wait(ctx context.Context) error {
	if err := znode.AwaitExists(ctx, b.sess, b.dir, false, nil); err != nil {
		return fmt.Errorf("barriers: wait on %s: %w", b.path, err)
	}
	return nil
}

// IsSet reports whether the barrier is up.
func (b *Barrier) IsSet(ctx context.Context) (bool, error) {
	up, err := znode.Exists(ctx, b.sess, b.dir)
	if err != nil {
		return false, fmt.Errorf("barriers: check %s: %w", b.path, err)
	}
	return up, nil
}
