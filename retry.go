package recipes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
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
// the connection comes back. A request whose write to the socket failed
// counts as one the connection closed under: go-zookeeper returns the
// socket's error (a broken pipe, say) for it, and Retry treats that as
// zk.ErrConnectionClosed (an error it returns then matches both).
//
// A request ZooKeeper cannot take (one over the server's jute.maxbuffer) is
// answered by closing the connection, every time it is sent. So once op has
// failed with zk.ErrConnectionClosed, it is called again only after the
// session's keep-alive probe (sent every tenth of the session timeout) has
// been answered on the new connection, and alone among the session's calls;
// after MaxDrops connections closed in a row under it, Retry gives up with
// an error wrapping ErrRequestDropped. Until that probe is answered, no
// other call is sent either: calls sent anew, each of which the server may
// drop, cannot close connection after connection with no proof of life in
// between. The call fails; the session, whose keep-alive is answered
// between the attempts, and every other call and hold carry on.
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
		suspect := drops > 0
		var err error
		if suspect {
			err = s.suspectTurn(ctx, closed)
		} else {
			err = s.plainTurn(ctx)
		}
		if err != nil {
			return err
		}
		s.mu.Lock()
		changed, err := s.changed, s.err
		s.mu.Unlock()
		if err != nil {
			s.endTurn(suspect)
			return err
		}
		znode.Of(s).Recorder().Request(ctx, retried)
		err = writeFailed(op(s.conn))
		s.endTurn(suspect)
		if err == nil || !znode.Retryable(err) {
			return err
		}
		if errors.Is(err, zk.ErrConnectionClosed) {
			closed = time.Now()
			s.noteClose(closed)
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

// noteClose records that a connection closed under a Retry call at closed:
// until a keep-alive probe sent after it is answered, no call is sent
// (plainTurn), so that a request the server drops, resent or sent anew by
// any number of calls, cannot close connection after connection with no
// proof of life in between.
func (s *Session) noteClose(closed time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if closed.After(s.lastClose) {
		s.lastClose = closed
	}
}

// plainTurn waits, for a call that no closed connection has caught yet,
// until the keep-alive has been answered since the last connection closed
// under a call, and no call sent again after a close is sending (those go
// alone: suspectTurn). endTurn(false) ends the turn, once the call has
// returned. On a session whose connections have not closed under a call, it
// waits for nothing, and allocates nothing.
func (s *Session) plainTurn(ctx context.Context) error {
	for waited := false; ; waited = true {
		s.mu.Lock()
		if !s.solo && !s.answered.Before(s.lastClose) {
			s.sending++
			s.mu.Unlock()
			return nil
		}
		gate, probed := s.gate, s.probed
		s.mu.Unlock()
		if !waited {
			// Until it returns, the keep-alive probes as for a hold.
			defer znode.Of(s).Need().Want()()
		}
		select {
		case <-gate:
		case <-probed:
		case <-s.done:
			return s.Err()
		case <-ctx.Done():
			return znode.CtxErr(ctx)
		}
	}
}

// endTurn ends the turn of a call that plainTurn (suspect false) or
// suspectTurn let send.
func (s *Session) endTurn(suspect bool) {
	s.mu.Lock()
	if suspect {
		s.solo = false
		s.openGateLocked()
	} else if s.sending--; s.solo && s.sending == 0 {
		s.openGateLocked() // the suspect waits for it: sendAlone
	}
	s.mu.Unlock()
	if suspect {
		<-s.suspect
	}
}

// openGateLocked wakes the calls that wait for solo or sending to change.
func (s *Session) openGateLocked() {
	close(s.gate)
	s.gate = make(chan struct{})
}

// suspectTurn waits, for a call whose request was in flight when a
// connection closed at closed, until no other such call is being sent, the
// keep-alive's probe has been answered on a later connection, and no other
// call is being sent: the server is alive and takes the session's requests,
// so if the connection closes under the call again, its request is the
// likely cause. endTurn(true) ends the turn, once the call has returned.
//
// The calls caught by one close wait for the same probe, the first one
// sent after it, and then go one after the other: a failover costs each
// call in flight at most the wait for one probe, not one each.
func (s *Session) suspectTurn(ctx context.Context, closed time.Time) error {
	select {
	case s.suspect <- struct{}{}:
	case <-s.done:
		return s.Err()
	case <-ctx.Done():
		return znode.CtxErr(ctx)
	}
	release := func() { <-s.suspect }
	for {
		if err := s.WaitConnected(ctx); err != nil {
			release()
			return err
		}
		// While a call waits for it (probedSince), the keep-alive
		// probes every tenth of the session timeout, the first a tenth
		// after the wait begins unless one was due sooner: go-zookeeper
		// restores its watches just after it reconnects, and a reply it
		// reads meanwhile races with that (docs/faults.md). A probe
		// sent after the close can only have been answered on a later
		// connection.
		probed, err := s.probedSince(ctx, closed)
		if err != nil {
			release()
			return err
		}
		if !probed {
			// The connection changed meanwhile: a probe answered
			// before may have been on the one now gone.
			closed = time.Now()
			continue
		}
		if err := s.sendAlone(ctx); err != nil {
			release()
			return err
		}
		return nil
	}
}

// probedSince waits until a keep-alive probe sent at or after since has been
// answered, and reports true, or until the session's state changes, and
// reports false.
func (s *Session) probedSince(ctx context.Context, since time.Time) (bool, error) {
	for waited := false; ; waited = true {
		s.mu.Lock()
		changed, probed, answered := s.changed, s.probed, s.answered
		s.mu.Unlock()
		if !answered.Before(since) {
			return true, nil
		}
		if !waited {
			// Until it returns, the keep-alive probes as for a hold.
			defer znode.Of(s).Need().Want()()
		}
		select {
		case <-probed:
		case <-changed:
			return false, nil
		case <-s.done:
			return false, s.Err()
		case <-ctx.Done():
			return false, znode.CtxErr(ctx)
		}
	}
}

// sendAlone stops new calls from being sent (plainTurn) and waits for those
// being sent to return.
func (s *Session) sendAlone(ctx context.Context) error {
	s.mu.Lock()
	s.solo = true
	for s.sending > 0 {
		gate := s.gate
		s.mu.Unlock()
		select {
		case <-gate:
		case <-s.done:
			s.unsolo()
			return s.Err()
		case <-ctx.Done():
			s.unsolo()
			return znode.CtxErr(ctx)
		}
		s.mu.Lock()
	}
	s.mu.Unlock()
	return nil
}

func (s *Session) unsolo() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.solo = false
	s.openGateLocked()
}

// writeFailed returns err as a connection that closed under the call
// (zk.ErrConnectionClosed, which wraps err) if it is the socket's own error:
// go-zookeeper gives a request whose write failed the network's error
// (broken pipe, connection reset, a write deadline), not
// ErrConnectionClosed, and closes the connection. The request may or may
// not have reached the server, as with any connection closed under a call.
func writeFailed(err error) error {
	if err == nil || znode.Retryable(err) {
		return err
	}
	var netErr net.Error // here, not above: it escapes, and the common nil error needs none
	// net.Error covers syscall.Errno (EPIPE, ECONNRESET) and *net.OpError.
	if errors.As(err, &netErr) || errors.Is(err, net.ErrClosed) || errors.Is(err, io.ErrShortWrite) || errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: %w", zk.ErrConnectionClosed, err)
	}
	return err
}
