package recipes

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/znode"
)

// Delete removes the node at path, whatever its version, and keeps trying
// across connection loss until ZooKeeper confirms the delete or reports the
// node gone; both count as success. This is Curator's guaranteed delete.
//
// If ctx ends first, Delete returns an error wrapping ctx's cause and the
// session goes on trying in the background until it succeeds or the session
// ends; Close waits for it. When the session ends, Delete stops and returns
// the session's error: the session's ephemeral nodes die with it, so for them
// that is as good as success. Errors that retrying cannot mend (such as
// zk.ErrNotEmpty or zk.ErrNoAuth) are returned at once; a refusal names the
// node whose ACL refused it: the parent, whose delete permission a delete
// needs.
//
// A Session made by NewSession can end (Close, or ErrSessionLost) while the
// caller's connection keeps its ZooKeeper session, and with it the nodes.
// Then, if the connection is connected with that same session, Delete still
// sends the delete, once; if it is not, the node lives until the connection
// is closed or its session expires.
func (s *Session) Delete(ctx context.Context, path string) error {
	if err := args.Context(ctx, "recipes: Session.Delete"); err != nil {
		return err
	}
	err := s.Retry(ctx, func(conn *zk.Conn) error { return deleteNode(conn, path) })
	if err != nil && errors.Is(err, s.Err()) {
		return s.deleteOutlived(ctx, path)
	}
	if err == nil || ctx.Err() == nil {
		return err
	}
	if !s.Go(func() {
		_ = s.Retry(context.Background(), func(conn *zk.Conn) error { return deleteNode(conn, path) })
	}) {
		// The session has just ended.
		ctx, cancel := context.WithTimeout(context.Background(), s.timeout())
		defer cancel()
		return s.deleteOutlived(ctx, path)
	}
	return fmt.Errorf("recipes: delete %s goes on in the background: %w", path, err)
}

func deleteNode(conn *zk.Conn, path string) error {
	return znode.IgnoreNoNode(znode.Delete(conn, path))
}

// deleteOutlived deletes a node of a Session that has ended while its
// connection, which the caller made (NewSession), may still have the same
// ZooKeeper session: it returns nil once the node is gone, and the session's
// error if it cannot tell (not connected now, or connected with another
// session, under which the node died with the old one), or if ctx ends first
// (the delete, sent, is then answered or given up by go-zookeeper).
func (s *Session) deleteOutlived(ctx context.Context, path string) error {
	err := s.Err()
	if s.owned || err == nil || errors.Is(err, ErrSessionExpired) {
		return err
	}
	if s.conn.State() != zk.StateHasSession || s.conn.SessionID() != s.ID() {
		return err
	}
	deleted := make(chan error, 1)
	go func() { deleted <- deleteNode(s.conn, path) }()
	select {
	case derr := <-deleted:
		if derr != nil {
			return err
		}
		return nil
	case <-ctx.Done():
		return err
	}
}
