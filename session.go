package recipes

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// A Session is one ZooKeeper session and the connection that carries it. Every
// recipe works inside a Session: its ephemeral nodes belong to it, and a hold
// ends when the session does.
//
// A Session tracks its state (see State) and ends for good, closing Done, when
//   - ZooKeeper reports the session expired (ErrSessionExpired),
//   - the client has been cut off for so long that the server may expire it
//     any moment (ErrSessionLost, from a client-side timer), or
//   - Close is called (ErrClosed).
//
// The client-side timer is what lets a holder learn of its loss before the
// server can give its lock to someone else: ZooKeeper expires a session no
// sooner than the session timeout after it last heard from the client, and the
// timer fires a tenth of the timeout before that moment. A session made by
// Connect knows when the server was last heard from and which timeout it
// granted; one made by NewSession assumes the worst go-zookeeper allows (the
// server last heard two thirds of the timeout before the disconnect was noticed).
//
// After a Session ends, a new one must be made; go-zookeeper's connection may
// carry on with a new ZooKeeper session, but this Session never follows it.
// All methods are safe for concurrent use.
type Session struct {
	conn  *zk.Conn
	owned bool // Connect made conn, so Close and loss close it
	opts  options
	wire  *wireStats // nil for a borrowed connection
	done  chan struct{}
	ready chan struct{} // closed on the first StateHasSession
	wg    sync.WaitGroup

	mu          sync.Mutex // guards the fields below
	established bool
	id          int64
	state       State
	err         error
	timer       *time.Timer
	timerGen    int
	changed     chan struct{} // closed and replaced on every state change
	readyClosed bool
}

func newSession(o options, owned bool) *Session {
	return &Session{
		owned:   owned,
		opts:    o,
		done:    make(chan struct{}),
		ready:   make(chan struct{}),
		state:   StateConnected,
		changed: make(chan struct{}),
	}
}

// Connect opens a connection to the ensemble and waits, within ctx, until
// ZooKeeper has granted it a session. The Session owns the connection: Close
// closes it, and so does the end of the session.
func Connect(ctx context.Context, servers []string, opts ...Option) (*Session, error) {
	o := buildOptions(opts)
	if len(servers) == 0 {
		return nil, errors.New("recipes: no ZooKeeper servers given")
	}
	if o.timeout <= 0 {
		return nil, fmt.Errorf("recipes: session timeout %v is not positive", o.timeout)
	}
	s := newSession(o, true)
	s.wire = &wireStats{}
	s.wire.negotiatedMs.Store(o.timeout.Milliseconds())
	dial := o.dialer
	if dial == nil {
		dial = net.DialTimeout
	}
	countingDialer := func(network, addr string, timeout time.Duration) (net.Conn, error) {
		c, err := dial(network, addr, timeout)
		if err != nil {
			return nil, err
		}
		return newCountingConn(c, s.wire), nil
	}
	conn, _, err := zk.Connect(servers, o.timeout,
		zk.WithDialer(countingDialer), zk.WithLogger(o.logger), zk.WithEventCallback(s.onEvent))
	if err != nil {
		return nil, fmt.Errorf("recipes: connect: %w", err)
	}
	s.conn = conn
	select {
	case <-s.ready:
	case <-ctx.Done():
		conn.Close()
		return nil, fmt.Errorf("recipes: connect to %v: %w", servers, context.Cause(ctx))
	}
	s.establish()
	return s, nil
}

// NewSession tracks the session of a connection the caller made with
// zk.Connect. events must be the channel zk.Connect returned, and nobody else
// may read it. NewSession waits, within ctx, until the connection has a
// session. Close ends the Session but leaves the connection open. Give the
// session timeout the connection was made with (WithSessionTimeout); the
// client-side timer depends on it.
//
// go-zookeeper's event channel holds a few events and drops the rest when
// full, so a session made this way also recognises expiry from the watches
// go-zookeeper drops and from a changed session id. Prefer Connect, whose
// events arrive through a callback and are never dropped.
func NewSession(ctx context.Context, conn *zk.Conn, events <-chan zk.Event, opts ...Option) (*Session, error) {
	if conn == nil || events == nil {
		return nil, errors.New("recipes: NewSession needs a connection and its event channel")
	}
	o := buildOptions(opts)
	if o.timeout <= 0 {
		return nil, fmt.Errorf("recipes: session timeout %v is not positive", o.timeout)
	}
	s := newSession(o, false)
	s.conn = conn
	for conn.State() != zk.StateHasSession {
		select {
		case _, ok := <-events:
			if !ok {
				return nil, fmt.Errorf("recipes: new session: %w", zk.ErrClosing)
			}
		case <-ctx.Done():
			return nil, fmt.Errorf("recipes: new session: %w", context.Cause(ctx))
		}
	}
	s.establish()
	s.wg.Go(func() {
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					s.finish(ErrClosed)
					return
				}
				s.onEvent(ev)
			case <-s.done:
				return
			}
		}
	})
	return s, nil
}

// establish records the session id once the first session is granted and
// catches a disconnect that slipped in before it.
func (s *Session) establish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.established = true
	s.id = s.conn.SessionID()
	if s.conn.State() != zk.StateHasSession {
		s.suspendLocked()
	}
}

func (s *Session) onEvent(ev zk.Event) {
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
			s.stopTimerLocked()
			s.setStateLocked(StateReconnected)
		}
	case zk.StateDisconnected:
		s.suspendLocked()
	case zk.StateExpired:
		s.finishLocked(ErrSessionExpired)
	}
}

func (s *Session) suspendLocked() {
	if s.state == StateSuspended {
		return
	}
	s.setStateLocked(StateSuspended)
	s.timerGen++
	gen := s.timerGen
	s.timer = time.AfterFunc(s.lossDelay(), func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.err == nil && s.state == StateSuspended && s.timerGen == gen {
			s.finishLocked(ErrSessionLost)
		}
	})
}

// lossDelay is how long from now the session may still be trusted while
// disconnected: a tenth of the timeout short of the earliest moment the server
// may expire it.
func (s *Session) lossDelay() time.Duration {
	timeout := s.timeout()
	margin := timeout / 10
	if s.wire != nil {
		last := time.Unix(0, s.wire.lastHeard.Load())
		return time.Until(last.Add(timeout - margin))
	}
	// go-zookeeper gives up on a silent connection after two thirds of the
	// timeout, so that is how long ago the server may last have heard from us.
	return timeout - timeout*2/3 - margin
}

// timeout is the session timeout in force: the one the server granted when
// the session can see it, else the one asked for.
func (s *Session) timeout() time.Duration {
	if s.wire != nil {
		if ms := s.wire.negotiatedMs.Load(); ms > 0 {
			return time.Duration(ms) * time.Millisecond
		}
	}
	return s.opts.timeout
}

func (s *Session) stopTimerLocked() {
	s.timerGen++
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
}

func (s *Session) setStateLocked(st State) {
	s.state = st
	close(s.changed)
	s.changed = make(chan struct{})
	if s.opts.listener != nil {
		s.opts.listener(st)
	}
}

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
	s.stopTimerLocked()
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
			s.conn.Close()
		})
	}
}

// Close ends the session and waits for its goroutines, including background
// deletes, to finish. A session made by Connect also closes its connection,
// which makes ZooKeeper delete the session's ephemeral nodes at once. Close is
// idempotent and returns nil.
func (s *Session) Close() error {
	s.finish(ErrClosed)
	s.wg.Wait()
	return nil
}

// Conn returns the underlying go-zookeeper connection.
func (s *Session) Conn() *zk.Conn { return s.conn }

// ID returns the ZooKeeper session id this Session tracks.
func (s *Session) ID() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// Done returns a channel closed when the session ends.
func (s *Session) Done() <-chan struct{} { return s.done }

// Err returns nil while the session lives, and then why it ended:
// ErrSessionExpired, ErrSessionLost or ErrClosed.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// State returns the session's current state.
func (s *Session) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// Timeout returns the session timeout in force (see WithSessionTimeout).
func (s *Session) Timeout() time.Duration { return s.timeout() }

// Stats returns counts of the session's traffic so far. Only a session made
// by Connect can see its traffic; for one made by NewSession they are zero.
func (s *Session) Stats() Stats {
	if s.wire == nil {
		return Stats{}
	}
	return Stats{Requests: s.wire.requests.Load(), WatchEvents: s.wire.watchEvents.Load()}
}

// WaitConnected returns nil once the session is connected (StateConnected or
// StateReconnected), the session's error if it ends first, or ctx's cause.
func (s *Session) WaitConnected(ctx context.Context) error {
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
			return context.Cause(ctx)
		}
	}
}
