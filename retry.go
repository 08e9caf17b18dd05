package recipes

import (
	"context"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/znode"
)

// Retry calls op until it returns something other than a connection
// problem. After zk.ErrConnectionClosed, zk.ErrNoServer, zk.ErrSessionMoved
// or zk.ErrClosing it waits until the session is connected again and calls
// op once more. It returns op's result, the session's error if the session
// ends first (op may or may not have taken effect), or ctx's cause.
//
// op must be safe to repeat: a request whose reply was lost may have been
// applied. If ctx has already ended, op is not called at all.
//
// While the session is suspended op waits for the connection to come back:
// go-zookeeper would queue the request and send it on whatever session the
// connection has next, which, after an expiry on a connection the caller
// made (NewSession), is a new one that no Session tracks, and a node created
// there would outlive everything that could delete it.
//
// This is Curator's retry loop without its sleeps: it retries exactly when
// the connection comes back.
func (s *Session) Retry(ctx context.Context, op func(conn *zk.Conn) error) error {
	if err := args.Context(ctx, "recipes: Session.Retry"); err != nil {
		return err
	}
	if err := znode.CtxErr(ctx); err != nil {
		return err // an ended ctx sends nothing
	}
	var retried error // why the previous attempt failed, for the log
	for {
		if err := s.WaitConnected(ctx); err != nil {
			return err
		}
		s.mu.Lock()
		changed, err := s.changed, s.err
		if err == nil {
			s.ops.Add(1)
		}
		s.mu.Unlock()
		if err != nil {
			return err
		}
		s.rec.Request(ctx, retried)
		err = op(s.conn)
		s.ops.Done()
		if err == nil || !znode.Retryable(err) {
			return err
		}
		retried = err
		// The call failed on the connection. Its disconnect may not have
		// been reported yet: wait for the state to move on from the one
		// seen before the call, then for a connection.
		select {
		case <-changed:
		case <-s.done:
			return s.Err()
		case <-ctx.Done():
			return znode.CtxErr(ctx)
		}
	}
}
