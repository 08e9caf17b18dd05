package recipes

import (
	"errors"
	"time"

	"github.com/zkrecipes/recipes/internal/znode"
)

func (s *Session) finish(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finishLocked(err)
}

func (s *Session) finishLocked(err error) {
	if s.err != nil {
		return
	}
	s.err = err
	close(s.done)
	switch {
	case errors.Is(err, ErrSessionExpired):
		s.setStateLocked(StateExpired)
	case errors.Is(err, ErrSessionLost):
		s.setStateLocked(StateLost)
	default:
		s.setStateLocked(StateClosed)
	}
	// Not inline: this may run on go-zookeeper's own goroutine, which
	// closing the connection waits for.
	s.wg.Go(func() {
		s.settle()
		if s.owned {
			s.conn.Close()
		}
	})
}

// settleWait bounds how long the end of a session waits for its container
// creates in flight to be answered, before it closes the socket under them
// (Connect's sessions) or gives up (see settle). On a live connection they
// are answered within a round trip.
const settleWait = 100 * time.Millisecond

// settle stops the session's container creates and waits for those in
// flight to return, so that a connection is closed only once none is (see
// znode.Containers: go-zookeeper's CreateContainer reads its reply even
// when Conn.Close makes it return early, while the reader may be decoding
// into it).
//
// A create still unanswered after settleWait is on a slow or dead
// connection. A session Connect made then closes its socket:
// go-zookeeper fails the requests sent on it at once, and sends the ones
// not sent yet on its next connection or fails them when no server
// answers. The wait ends there, or after the session timeout at most; the
// session's close request goes out on go-zookeeper's next connection, as
// after any connection loss. On a connection the caller made (NewSession)
// the session waits, at most the session timeout, so that the caller can
// close the connection once Close returns.
func (s *Session) settle() {
	idle := znode.Of(s).Containers().Close()
	select {
	case <-idle:
		return
	case <-time.After(settleWait):
	}
	if c := s.socket.Load(); c != nil {
		c.Close()
	}
	select {
	case <-idle:
	case <-time.After(s.timeout()):
	}
}

// Go runs f on a goroutine that the session owns: Close waits for it to
// return. It reports whether it did; once the session has ended it does not,
// and f is not called. This is the session's join point for work that must
// outlive the call that started it, such as a cleanup that the caller's
// context must not cut short: the recipes use it, and so may their users.
//
// f must return promptly once the session ends (Done is closed): Close
// blocks until it does. Session.Retry and every call that takes the session
// return when it ends, so work made of them complies.
func (s *Session) Go(f func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return false
	}
	s.wg.Go(f)
	return true
}

// Close ends the session and waits for its goroutines, those started by Go
// (such as background deletes) included, to finish. A session made by
// Connect also closes its connection, which makes ZooKeeper delete the
// session's ephemeral nodes at once; it does so once no container create
// (a recipe's parent node) is in flight on it, closing the socket under one
// still unanswered after 100 ms (see NewSession for why). On a connection
// made by the caller (NewSession), Close waits for such a create, at most
// the session timeout, and a keep-alive sync still in flight is not waited
// for: it ends when go-zookeeper answers it or gives up on the connection.
// Close is idempotent and returns nil.
func (s *Session) Close() error {
	s.finish(ErrClosed)
	s.wg.Wait()
	return nil
}

// Err returns nil while the session lives, and then why it ended:
// ErrSessionExpired, ErrSessionLost or ErrClosed. While a recipe holds,
// waits or acquires on the session, it compares the loss deadline with the
// clock itself, so a process that was paused past the deadline learns of
// the loss from Err even before the deadline's timer has run.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil && znode.Of(s).Need().Lapsed(time.Now()) {
		s.finishLocked(ErrSessionLost)
	}
	return s.err
}
