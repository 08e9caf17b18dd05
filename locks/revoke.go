package locks

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/jute"
	"github.com/zkrecipes/recipes/internal/recipe"
	"github.com/zkrecipes/recipes/internal/seqnode"
	"github.com/zkrecipes/recipes/internal/znode"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// Revoke asks the holder (or a waiter) of the lock node at nodePath to let
// go, the way Curator's Revoker does: it writes "__REVOKE__" into the node,
// in place of the holder's own data. Revocation is cooperative: nothing is
// deleted, and the node's owner sees the request on Revoked and decides. Go
// holders and Java holders that called makeRevocable both understand it.
// Take node paths from Participants.
//
// Only a Mutex's or an RWMutex's node can be revoked: a name that Curator's
// protected create makes, with the lock name "lock-", "__READ__" or
// "__WRIT__". Anything else (a semaphore's lease, which no holder listens
// on; a recipe's own path, which may carry its metadata; a barrier) is
// refused with ErrNotRevocable and left untouched, as is a node that does
// not exist (then the error also wraps zk.ErrNoNode). Curator's Revoker
// writes wherever it is told.
func Revoke(ctx context.Context, sess *recipes.Session, nodePath string) error {
	if err := args.Context(ctx, "locks: Revoke"); err != nil {
		return err
	}
	if err := recipe.Where(sess, nodePath); err != nil {
		return err
	}
	full := zpath.Under(sess.Chroot(), nodePath)
	if err := args.Fits("the revocation of "+args.Short(full), jute.SetData(full, len(seqnode.RevokeData))); err != nil {
		return err
	}
	if why := notRevocable(zpath.Base(nodePath)); why != "" {
		return fmt.Errorf("%w: %s %s", ErrNotRevocable, nodePath, why)
	}
	err := sess.Retry(ctx, func(conn *zk.Conn) error {
		_, err := znode.Set(conn, zpath.Under(sess.Chroot(), nodePath), seqnode.RevokeData, -1)
		return err
	})
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return fmt.Errorf("%w: %s does not exist (its holder may have let go): %w", ErrNotRevocable, nodePath, err)
	case err != nil:
		return fmt.Errorf("revoke %s: %w", nodePath, err)
	}
	return nil
}

// revocableLockNames are the lock names whose holders listen for revocation.
var revocableLockNames = []string{mutexLockName, readLockName, writeLockName}

// notRevocable says why a node called name cannot be revoked, or "" if it
// can.
func notRevocable(name string) string {
	switch {
	case seqnode.UUID(name) == "":
		return "is not a lock node (no protected name)"
	case seqnode.Parse(name, leaseLockName).HasSeq:
		return "is a semaphore lease, whose holder does not listen for revocation"
	case !seqnode.Parse(name, revocableLockNames...).HasSeq:
		return "is not a lock node (no lock name and sequence)"
	}
	return ""
}
