package locks

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/seqnode"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// Revoke asks the holder (or a waiter) of the lock node at nodePath to let
// go, the way Curator's Revoker does: it writes "__REVOKE__" into the node.
// Revocation is cooperative: nothing is deleted, and the node's owner sees
// the request on Revoked and decides. Go holders and Java holders that called
// makeRevocable both understand it. A node that is already gone is not an
// error. Take node paths from Participants.
func Revoke(ctx context.Context, sess *recipes.Session, nodePath string) error {
	if sess == nil {
		return fmt.Errorf("%w: nil session", ErrInvalid)
	}
	if err := zpath.Validate(nodePath); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	err := sess.Retry(ctx, func(conn *zk.Conn) error {
		_, err := conn.Set(nodePath, seqnode.RevokeData, -1)
		return err
	})
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("locks: revoke %s: %w", nodePath, err)
	}
	return nil
}
