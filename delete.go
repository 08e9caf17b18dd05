package recipes

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// Retry calls op until it returns something other than a connection
// problem. After zk.ErrConnectionClosed, zk.ErrNoServer, zk.ErrSessionMoved
// or zk.ErrClosing it waits until the session is connected again and calls
// op once more. It returns op's result, the session's error if the session
// ends first (op may or may not have taken effect), or ctx's cause.
//
// op must be safe to repeat: a request whose reply was lost may have been
// applied. If ctx has already ended, op is not called at all. This is Curator's retry loop without its sleeps: it retries
// exactly when the connection comes back.
func (s *Session) Retry(ctx context.Context, op func(conn *zk.Conn) error) error {
	if err := context.Cause(ctx); err != nil {
		return err // an ended ctx sends nothing
	}
	for {
		s.mu.Lock()
		changed, err := s.changed, s.err
		s.mu.Unlock()
		if err != nil {
			return err
		}
		err = op(s.conn)
		if err == nil || !retryable(err) {
			return err
		}
		// The call failed on the connection. Its disconnect may not have
		// been reported yet: wait for the state to move on from the one
		// seen before the call, then for a connection.
		select {
		case <-changed:
		case <-s.done:
			return s.Err()
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		if err := s.WaitConnected(ctx); err != nil {
			return err
		}
	}
}

// Delete removes the node at path, whatever its version, and keeps trying
// across connection loss until ZooKeeper confirms the delete or reports the
// node gone; both count as success. This is Curator's guaranteed delete.
//
// If ctx ends first, Delete returns an error wrapping ctx's cause and the
// session goes on trying in the background until it succeeds or the session
// ends; Close waits for it. When the session ends, Delete stops and returns
// the session's error: the session's ephemeral nodes die with it, so for them
// that is as good as success. Errors that retrying cannot mend (such as
// zk.ErrNotEmpty or zk.ErrNoAuth) are returned at once.
func (s *Session) Delete(ctx context.Context, path string) error {
	err := s.Retry(ctx, func(conn *zk.Conn) error { return deleteNode(conn, path) })
	if err == nil || ctx.Err() == nil {
		return err
	}
	s.Go(func() {
		_ = s.Retry(context.Background(), func(conn *zk.Conn) error { return deleteNode(conn, path) })
	})
	return fmt.Errorf("recipes: delete %s goes on in the background: %w", path, err)
}

func deleteNode(conn *zk.Conn, path string) error {
	err := conn.Delete(path, -1)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}

// retryable reports whether a ZooKeeper error is a connection problem that a
// retry on the same session can get past.
func retryable(err error) bool {
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) ||
		errors.Is(err, zk.ErrSessionMoved) || errors.Is(err, zk.ErrClosing)
}
