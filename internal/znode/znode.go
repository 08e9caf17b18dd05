// Package znode is the node-operations layer every recipe and the lock
// engine share, over the Session interface:
//
//   - creating a node with its missing parents as container nodes, as
//     Curator's creatingParentContainersIfNeeded does (this file);
//   - reads and watched reads over Session.Retry that return what they read
//     (ops.go), and deleting on a context of its own (DeleteDetached);
//   - waiting on a watch (watch.go).
package znode

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/zpath"
)

// acls are the ACLs of the nodes a recipe creates: the node at top (the
// recipe's own path) and every node below it get node (recipes.WithACL);
// the container parents made above top get parent (recipes.WithParentACL).
type acls struct {
	top    string
	node   []zk.ACL
	parent []zk.ACL
}

// aclsFor are sess's ACLs for a recipe at top.
func aclsFor(sess Session, top string) acls {
	return acls{top: top, node: sess.ACL(), parent: sess.ParentACL()}
}

// of is the ACL of the node at path.
func (a acls) of(path string) []zk.ACL {
	if path == a.top || strings.HasPrefix(path, a.top+"/") || a.parent == nil {
		return a.node
	}
	return a.parent
}

// Create creates the node at path on sess's connection conn, one of a
// recipe's own (at or under top, the recipe's path, so its ACL is
// sess.ACL()), creating its parent and the parent's missing ancestors as
// containers when ZooKeeper reports the parent missing. A container may be
// reaped between the two steps, so it tries a few times. A refusal
// (zk.ErrNoAuth) names the node whose ACL refused it (Denied).
func Create(sess Session, conn *zk.Conn, path string, flags int32, data []byte, top string) (string, error) {
	for range 3 {
		p, err := conn.Create(path, data, flags, sess.ACL())
		if err == nil {
			return p, nil
		}
		ancestors := zpath.Ancestors(path)
		if !errors.Is(err, zk.ErrNoNode) || len(ancestors) == 0 {
			return p, RefusedCreate(err, path)
		}
		if err := ensureContainer(sess, conn, ancestors[0], top); err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("parent %s keeps disappearing: %w", parentOf(path), zk.ErrNoNode)
}

// ensureContainer creates dir as a container node, and its missing
// ancestors before it, nearest first, for a recipe at top (their ACLs are
// those of aclsFor), through the session's Containers. An existing dir
// costs one request.
func ensureContainer(sess Session, conn *zk.Conn, dir, top string) error {
	cont, acl := Of(sess).Containers(), aclsFor(sess, top)
	err := cont.create(conn, dir, acl.of(dir))
	if errors.Is(err, zk.ErrNoNode) {
		if ancestors := zpath.Ancestors(dir); len(ancestors) > 0 {
			if err := ensureContainer(sess, conn, ancestors[0], top); err != nil {
				return err
			}
		}
		err = cont.create(conn, dir, acl.of(dir))
	}
	if err == nil || errors.Is(err, zk.ErrNodeExists) {
		return nil
	}
	return RefusedCreate(err, dir)
}

// Retryable reports whether a ZooKeeper error is a connection problem that a
// retry on the same session can get past (recipes.Session.Retry retries
// them).
func Retryable(err error) bool {
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) ||
		errors.Is(err, zk.ErrSessionMoved) || errors.Is(err, zk.ErrClosing)
}

// IgnoreNoNode returns nil for zk.ErrNoNode and err otherwise: for deletes
// and reads of nodes that may already be gone.
func IgnoreNoNode(err error) error {
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}

// CtxErr is why ctx ended, nil while it lives: its cause (context.Cause),
// which errors.Is also matches with ctx.Err (context.Canceled or
// context.DeadlineExceeded) when the cause is an error of the caller's own,
// as a check for context.Canceled expects. Its message is the cause's.
func CtxErr(ctx context.Context) error {
	cause := context.Cause(ctx)
	if cause == nil {
		return nil
	}
	if err := ctx.Err(); !errors.Is(cause, err) {
		return ctxError{cause, err}
	}
	return cause
}

type ctxError struct{ cause, err error }

func (e ctxError) Error() string   { return e.cause.Error() }
func (e ctxError) Unwrap() []error { return []error{e.cause, e.err} }
