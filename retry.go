package recipes

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/znode"
)

// MaxDrops is how many times in a row a call through Session.Retry sends its
// request into a connection that then closes, the last MaxDrops-1 times after
// the server answered the session's keep-alive probe on that connection,
// before it fails with ErrRequestDropped.
const MaxDrops = 3

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
//
// A request ZooKeeper cannot take (one over the server's jute.maxbuffer) is
// answered by closing the connection, every time it is sent. So once op has
// failed with zk.ErrConnectionClosed, it is called again only after the
// session's keep-alive probe (sent every tenth of the session timeout) has
// been answered on the new connection, and alone among such calls of the
// session; after MaxDrops connections closed in a row under it, Retry gives
// up with an error wrapping ErrRequestDropped. The call fails; the session,
// whose keep-alive is answered between the attempts, and every other call
// and hold carry on.
func (s *Session) Retry(ctx context.Context, op func(conn *zk.Conn) error) error {
	if err := args.Context(ctx, "recipes: Session.Retry"); err != nil {
		return err
	}
	if err := znode.CtxErr(ctx); err != nil {
		return err // an ended ctx sends nothing
	}
	var retried error    // why the previous attempt failed, for the log
	drops := 0           // connections closed in a row under op
	var closed time.Time // when the last of them closed
	for {
		if err := s.WaitConnected(ctx); err != nil {
			return err
		}
		done := func() {}
		if drops > 0 {
			var err error
			if done, err = s.suspectTurn(ctx, closed); err != nil {
				return err
			}
		}
		s.mu.Lock()
		changed, err := s.changed, s.err
		if err == nil {
			s.ops.Add(1)
		}
		s.mu.Unlock()
		if err != nil {
			done()
			return err
		}
		s.rec.Request(ctx, retried)
		err = op(s.conn)
		s.ops.Done()
		done()
		if err == nil || !znode.Retryable(err) {
			return err
		}
		if errors.Is(err, zk.ErrConnectionClosed) {
			closed = time.Now()
			if drops++; drops == MaxDrops {
				return fmt.Errorf("%w: the connection closed each of the %d times the request was sent, though the server answered the session in between: it may be over the server's jute.maxbuffer (%w)",
					ErrRequestDropped, MaxDrops, err)
			}
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

// suspectTurn waits, for a call whose request was in flight when a
// connection closed at closed, until no other such call is being sent and
// the keep-alive's probe has been answered on a later connection: the
// server is alive and takes the session's requests, so if the connection
// closes under the call again, its request is the likely cause. done ends
// the turn, once the call has returned.
//
// The calls caught by one close wait for the same probe, the first one
// sent after it, and then go one after the other: a failover costs each
// call in flight at most the wait for one probe, not one each.
func (s *Session) suspectTurn(ctx context.Context, closed time.Time) (done func(), err error) {
	select {
	case s.suspect <- struct{}{}:
	case <-s.done:
		return nil, s.Err()
	case <-ctx.Done():
		return nil, znode.CtxErr(ctx)
	}
	done = func() { <-s.suspect }
	for {
		if err := s.WaitConnected(ctx); err != nil {
			done()
			return nil, err
		}
		// The keep-alive probes every tenth of the session timeout. It
		// is not asked for one now: go-zookeeper restores its watches
		// just after it reconnects, and a reply it reads meanwhile races
		// with that (docs/faults.md). A probe sent after the close can
		// only have been answered on a later connection.
		since := closed
	wait:
		for {
			s.mu.Lock()
			changed, probed, answered := s.changed, s.probed, s.answered
			s.mu.Unlock()
			if !answered.Before(since) {
				return done, nil
			}
			select {
			case <-probed:
			case <-changed:
				// A probe answered before this change may have been
				// on the connection now gone: wait for one sent on
				// the next.
				closed = time.Now()
				break wait
			case <-s.done:
				done()
				return nil, s.Err()
			case <-ctx.Done():
				done()
				return nil, znode.CtxErr(ctx)
			}
		}
	}
}
