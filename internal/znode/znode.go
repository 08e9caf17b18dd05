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

// ACLs are the ACLs of the nodes a recipe creates: the node at Top (the
// recipe's own path) and every node below it get Node (recipes.WithACL);
// the container parents made above Top get Parent (recipes.WithParentACL).
type ACLs struct {
	Top    string
	Node   []zk.ACL
	Parent []zk.ACL
}

// ACLsFor are sess's ACLs for a recipe at top.
func ACLsFor(sess Session, top string) ACLs {
	return ACLs{Top: top, Node: sess.ACL(), Parent: sess.ParentACL()}
}

// For is the ACL of the node at path.
func (a ACLs) For(path string) []zk.ACL {
	if path == a.Top || strings.HasPrefix(path, a.Top+"/") || a.Parent == nil {
		return a.Node
	}
	return a.Parent
}

// Create creates the node at path, one of a recipe's own (at or under
// acls.Top, so its ACL is acls.Node), creating its parent and the parent's
// missing ancestors as containers when ZooKeeper reports the parent
// missing. A container may be reaped between the two steps, so it tries a
// few times. A refusal (zk.ErrNoAuth) names the node whose ACL refused it
// (Denied).
func Create(conn *zk.Conn, path string, flags int32, data []byte, acls ACLs) (string, error) {
	for range 3 {
		p, err := conn.Create(path, data, flags, acls.Node)
		if err == nil {
			return p, nil
		}
		ancestors := zpath.Ancestors(path)
		if !errors.Is(err, zk.ErrNoNode) || len(ancestors) == 0 {
			return p, RefusedCreate(err, path)
		}
		if err := EnsureContainer(conn, ancestors[0], acls); err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("parent %s keeps disappearing: %w", parentOf(path), zk.ErrNoNode)
}

// EnsureContainer creates dir as a container node, and its missing ancestors
// before it, nearest first, each with its ACL from acls. An existing dir
// costs one request.
func EnsureContainer(conn *zk.Conn, dir string, acls ACLs) error {
	_, err := conn.CreateContainer(dir, nil, zk.FlagContainer, acls.For(dir))
	if errors.Is(err, zk.ErrNoNode) {
		if ancestors := zpath.Ancestors(dir); len(ancestors) > 0 {
			if err := EnsureContainer(conn, ancestors[0], acls); err != nil {
				return err
			}
		}
		_, err = conn.CreateContainer(dir, nil, zk.FlagContainer, acls.For(dir))
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
