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
	if s.owned {
		// Not inline: this may run on go-zookeeper's own goroutine, which
		// Close waits for.
		s.wg.Go(func() {
			s.drain()
			s.conn.Close()
		})
	}
}

// drainWait bounds how long closing the connection waits for requests in
// flight: on a live connection they are answered within a round trip; on a
// dead one nothing arrives that could race with the close, and a call still
// waiting there (a release's delete) returns only once the connection is
// closed, so the wait is kept short.
const drainWait = 100 * time.Millisecond

// drain waits, at most drainWait, for the requests sent through Retry to
// return. go-zookeeper's Close makes a request in flight return at once while
// its reader may still be decoding the answer into it (CreateContainer reads
// the answer regardless), a data race inside go-zookeeper that closing a live
// connection under a busy recipe would hit.
func (s *Session) drain() {
	idle := make(chan struct{})
	s.wg.Go(func() {
		s.ops.Wait() // no new request starts once the session has ended
		close(idle)
	})
	select {
	case <-idle:
	case <-time.After(drainWait):
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
// session's ephemeral nodes at once. On a connection made by the caller
// (NewSession), a keep-alive sync still in flight is not waited for: it ends
// when go-zookeeper answers it or gives up on the connection. Close is
// idempotent and returns nil.
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
