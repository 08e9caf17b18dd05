package barriers

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/znode"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// Leave leaves the barrier and waits until every member that entered has
// left, following Curator's protocol: every member but the lowest deletes
// its node and waits for the lowest; the lowest waits for the others and
// leaves last. The last to leave deletes the ready node.
//
// If ctx ends first, Leave stops waiting, deletes this member's node if it
// is still there (so no node is left behind) and returns ctx's cause.
func (b *DoubleBarrier) Leave(ctx context.Context) error {
	if err := args.Context(ctx, "barriers: DoubleBarrier.Leave"); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.entered {
		return fmt.Errorf("%w: leave %s", ErrNotEntered, b.at.Path)
	}
	b.entered = false
	err := b.leave(ctx)
	if err != nil {
		if derr := znode.DeleteDetached(b.sess, b.node); derr != nil && b.sess.Err() == nil {
			err = errors.Join(err, derr)
		}
	}
	// As in Curator, whoever finishes deletes the ready node, so the next
	// round starts closed.
	if derr := b.sess.Delete(context.WithoutCancel(ctx), b.ready); derr != nil && err == nil && b.sess.Err() == nil {
		err = derr
	}
	if err != nil {
		return fmt.Errorf("leave %s: %w", b.at.Path, err)
	}
	return nil
}

func (b *DoubleBarrier) leave(ctx context.Context) error {
	ours := zpath.Base(b.node)
	ourNodeExists := true
	for {
		names, err := znode.Children(ctx, b.sess, b.at.Dir)
		if err != nil {
			return err
		}
		names = slices.DeleteFunc(names, func(n string) bool { return n == readyNode })
		slices.Sort(names)
		switch {
		case len(names) == 0:
			return nil
		case ourNodeExists && !slices.Contains(names, ours):
			return fmt.Errorf("%w: %s", ErrMemberLost, b.node)
		case len(names) == 1:
			if ourNodeExists {
				return b.sess.Delete(ctx, b.node)
			}
			// The last one left is someone else, who will finish.
		}
		var watch string
		if names[0] == ours {
			watch = names[len(names)-1] // the lowest waits for the highest
		} else {
			watch = names[0] // the others wait for the lowest
			if ourNodeExists {
				if err := b.sess.Delete(ctx, b.node); err != nil {
					return err
				}
				ourNodeExists = false
			}
		}
		if err := znode.AwaitExists(ctx, b.sess, zpath.Join(b.at.Dir, watch), false, nil); err != nil {
			return err
		}
	}
}
