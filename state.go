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

// State is where a Session stands with ZooKeeper.
type State int

// The states of a Session, in the order Curator's ConnectionState names them.
const (
	StateConnected   State = iota + 1 // session established, connection up
	StateSuspended                    // connection down; the session may live on
	StateReconnected                  // back on the same session after a suspension
	StateExpired                      // the server expired the session (final)
	StateLost                         // disconnected for the session timeout (final)
	StateClosed                       // Close was called (final)
)

func (s State) String() string {
	switch s {
	case StateConnected:
		return "connected"
	case StateSuspended:
		return "suspended"
	case StateReconnected:
		return "reconnected"
	case StateExpired:
		return "expired"
	case StateLost:
		return "lost"
	case StateClosed:
		return "closed"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

func (s *Session) onEvent(ev zk.Event) {
	if ev.Type == zk.EventSession && ev.State == zk.StateDisconnected {
		s.disconnects.Add(1)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ev.Type != zk.EventSession {
		// go-zookeeper drops its watches with ErrSessionExpired when the
		// server says the session expired. A borrowed connection's events
		// reach us late, and its channel drops events when full, so this
		// may be the first sign.
		if s.established && ev.Type == zk.EventNotWatching && errors.Is(ev.Err, zk.ErrSessionExpired) {
			s.finishLocked(ErrSessionExpired)
		}
		return
	}
	if !s.established {
		if ev.State == zk.StateHasSession && !s.readyClosed {
			if d := s.dialled.Load(); d != nil {
				// go-zookeeper reports the session on the connection it
				// dialled last, before it dials again. The leader
				// started the session's clock after that dial: the
				// first proof of life.
				s.granted = *d
			}
			s.readyClosed = true
			close(s.ready)
		}
		return
	}
	if s.err != nil {
		return
	}
	if id := s.conn.SessionID(); id != 0 && id != s.id {
		// Already on another session: the events of its expiry were
		// dropped (see above).
		s.finishLocked(ErrSessionExpired)
		return
	}
	switch ev.State {
	case zk.StateHasSession:
		if s.conn.SessionID() != s.id {
			s.finishLocked(ErrSessionExpired)
			return
		}
		if s.state == StateSuspended {
			s.setStateLocked(StateReconnected)
		}
		if d := s.dialled.Load(); d != nil {
			// The keep-alive takes the new grant, which may be shorter,
			// into account (keepAlive); a newer one replaces one it has
			// not taken yet.
			select {
			case <-s.regranted:
			default:
			}
			s.regranted <- *d
		}
	case zk.StateDisconnected:
		if s.state != StateSuspended {
			s.setStateLocked(StateSuspended)
		}
	case zk.StateExpired:
		s.finishLocked(ErrSessionExpired)
	}
}

func (s *Session) setStateLocked(st State) {
	s.state = st
	if st == StateSuspended {
		s.suspended = time.Now()
	}
	close(s.changed)
	s.changed = make(chan struct{})
	s.reportStateLocked(st)
}

// reportStateLocked tells the state listener, the log and the metrics that
// the session is in st.
func (s *Session) reportStateLocked(st State) {
	if s.opts.listener != nil {
		s.opts.listener(st)
	}
	znode.Of(s).Recorder().State(st.String(), s.err)
}

// stateChanged returns the channel closed at the next state change.
func (s *Session) stateChanged() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// suspendedSince reports since when the session has been StateSuspended, and
// whether it is now.
func (s *Session) suspendedSince() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.suspended, s.state == StateSuspended
}

// State returns the session's current state.
func (s *Session) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// WaitConnected returns nil once the session is connected (StateConnected or
// StateReconnected), the session's error if it ends first, or ctx's cause.
func (s *Session) WaitConnected(ctx context.Context) error {
	if err := args.Context(ctx, "recipes: Session.WaitConnected"); err != nil {
		return err
	}
	for {
		s.mu.Lock()
		st, err, changed := s.state, s.err, s.changed
		s.mu.Unlock()
		switch {
		case err != nil:
			return err
		case st == StateConnected || st == StateReconnected:
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return znode.CtxErr(ctx)
		}
	}
}
