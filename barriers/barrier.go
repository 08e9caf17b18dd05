package barriers

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/jute"
	"github.com/zkrecipes/recipes/internal/layout"
	"github.com/zkrecipes/recipes/internal/recipe"
	"github.com/zkrecipes/recipes/internal/znode"
)

// A Barrier holds processes back until it is removed: Curator's
// DistributedBarrier, on the same node. Set puts it up, Remove takes it down,
// and Wait returns once it is down. It is safe for concurrent use.
type Barrier struct {
	sess *recipes.Session
	at   args.Target
}

// NewBarrier returns the barrier at path. It does no I/O, and refuses a nil
// session, a malformed path, data over recipes.MaxDataSize, or a barrier
// whose create, with the path under the chroot, the data and the ACL, would
// be over recipes.MaxRequest.
func NewBarrier(sess *recipes.Session, path string, opts ...recipes.NodeOption) (*Barrier, error) {
	at, err := recipe.Check(sess, path, opts)
	if err != nil {
		return nil, err
	}
	if err := args.Fits("the create of barrier "+args.Short(at.Dir)+fmt.Sprintf(" with %d bytes of data", len(at.Data)), jute.Create(at.Dir, len(at.Data), sess.ACL())); err != nil {
		return nil, err
	}
	return &Barrier{sess: sess, at: at}, nil
}

// Path returns the barrier's path.
func (b *Barrier) Path() string { return b.at.Path }

// Set puts the barrier up: it creates the barrier's node (persistent, so it
// outlives this session; its missing parents are created as containers). A
// barrier that is already up is not an error. A ctx that has already ended
// gets its cause back, and nothing is created.
func (b *Barrier) Set(ctx context.Context) error {
	if err := args.Context(ctx, "barriers: Barrier.Set"); err != nil {
		return err
	}
	// Retry sends nothing for an ended ctx.
	err := b.sess.Retry(ctx, func(conn *zk.Conn) error {
		for {
			_, err := znode.Create(b.sess, conn, b.at.Dir, zk.FlagPersistent, b.at.Data, b.at.Dir)
			if !errors.Is(err, zk.ErrNodeExists) {
				return err
			}
			// Up already, unless the node is another recipe's path.
			names, _, err := conn.Children(b.at.Dir)
			if errors.Is(err, zk.ErrNoNode) {
				continue // removed meanwhile: put it up again
			}
			if err != nil {
				return znode.RefusedRead(err, b.at.Dir)
			}
			return layout.Check(b.at.Path, names, layout.Barrier)
		}
	})
	if err != nil {
		return fmt.Errorf("set %s: %w", b.at.Path, err)
	}
	return nil
}

// Remove takes the barrier down, releasing every waiter. A barrier that is
// not up is not an error. A ctx that has already ended gets its cause back,
// and the barrier stays as it is.
func (b *Barrier) Remove(ctx context.Context) error {
	if err := args.Context(ctx, "barriers: Barrier.Remove"); err != nil {
		return err
	}
	err := b.sess.Retry(ctx, func(conn *zk.Conn) error {
		err := znode.Delete(conn, b.at.Dir)
		if !errors.Is(err, zk.ErrNotEmpty) {
			return znode.IgnoreNoNode(err)
		}
		// A lock cannot tell a barrier's node from a parent of its
		// nodes, so one may have come to use it: say whose they are.
		names, _, lerr := conn.Children(b.at.Dir)
		if lerr != nil {
			return err
		}
		if kerr := layout.Check(b.at.Path, names, layout.Barrier); kerr != nil {
			return kerr
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("remove %s: %w", b.at.Path, err)
	}
	return nil
}

// Wait returns nil once the barrier is down, at once if it is not up. It
// returns ctx's cause if ctx ends first (or has ended already), and the
// session's error if the session ends first (expired, or cut off for the
// session timeout): a waiter that cannot see the barrier is never told it
// has passed. A path that a lock or a double barrier uses is no barrier: its
// node goes only when that recipe is done with it, so Wait returns an error
// wrapping recipes.ErrOtherRecipe instead of waiting, as Set and Remove do. It looks
// each time the node changes; a lock that comes under a barrier that is up
// is found by Remove. Wait needs no permission on the barrier's node: a
// session that may not read its children waits without that check.
func (b *Barrier) Wait(ctx context.Context) error {
	if err := args.Context(ctx, "barriers: Barrier.Wait"); err != nil {
		return err
	}
	for {
		up, ev, err := znode.ExistsW(ctx, b.sess, b.at.Dir)
		if err == nil && !up {
			return nil
		}
		if err == nil {
			err = b.checkOwn(ctx)
		}
		if err == nil {
			err = znode.WaitEvent(ctx, b.sess, ev)
		}
		if err != nil {
			return fmt.Errorf("wait on %s: %w", b.at.Path, err)
		}
	}
}

// checkOwn returns an error wrapping recipes.ErrOtherRecipe if another recipe's
// nodes are under the barrier's path.
func (b *Barrier) checkOwn(ctx context.Context) error {
	names, err := znode.Children(ctx, b.sess, b.at.Dir)
	if errors.Is(err, zk.ErrNoAuth) {
		// Waiting needs no read permission (ZooKeeper does not check
		// exists): a waiter that may not list the barrier's children
		// cannot tell, and waits as before.
		return nil
	}
	if err != nil {
		return err
	}
	return layout.Check(b.at.Path, names, layout.Barrier)
}

// IsSet reports whether the barrier is up.
func (b *Barrier) IsSet(ctx context.Context) (bool, error) {
	if err := args.Context(ctx, "barriers: Barrier.IsSet"); err != nil {
		return false, err
	}
	up, err := znode.Exists(ctx, b.sess, b.at.Dir)
	if err != nil {
		return false, fmt.Errorf("check %s: %w", b.at.Path, err)
	}
	return up, nil
}
