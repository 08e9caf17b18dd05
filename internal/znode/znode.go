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

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/zpath"
)

// Create creates the node at path, creating its parent and the parent's
// missing ancestors as containers when ZooKeeper reports the parent missing.
// A container may be reaped between the two steps, so it tries a few times.
// Every node it creates gets acl.
func Create(conn *zk.Conn, path string, flags int32, data []byte, acl []zk.ACL) (string, error) {
	ancestors := zpath.Ancestors(path)
	for range 3 {
		p, err := conn.Create(path, data, flags, acl)
		if !errors.Is(err, zk.ErrNoNode) || len(ancestors) == 0 {
			return p, err
		}
		if err := EnsureContainer(conn, ancestors[0], acl); err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("parent %s keeps disappearing: %w", ancestors[0], zk.ErrNoNode)
}

// EnsureContainer creates dir as a container node, and its missing ancestors
// before it, nearest first. An existing dir costs one request.
func EnsureContainer(conn *zk.Conn, dir string, acl []zk.ACL) error {
	_, err := conn.CreateContainer(dir, nil, zk.FlagContainer, acl)
	if errors.Is(err, zk.ErrNoNode) {
		if ancestors := zpath.Ancestors(dir); len(ancestors) > 0 {
			if err := EnsureContainer(conn, ancestors[0], acl); err != nil {
				return err
			}
		}
		_, err = conn.CreateContainer(dir, nil, zk.FlagContainer, acl)
	}
	if err == nil || errors.Is(err, zk.ErrNodeExists) {
		return nil
	}
	return err
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
