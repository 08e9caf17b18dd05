package recipes

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/telemetry"
	"github.com/zkrecipes/recipes/internal/znode"
)

// A Session is one ZooKeeper session and the connection that carries it. Every
// recipe works inside a Session: its ephemeral nodes belong to it, and a hold
// ends when the session does.
//
// A Session tracks its state (see State) and ends for good, closing Done, when
//   - ZooKeeper reports the session expired (ErrSessionExpired),
//   - the session has gone so long without proof that the leader heard from
//     it that the leader may expire it soon (ErrSessionLost, from a
//     client-side deadline), or
//   - Close is called (ErrClosed).
//
// The client-side deadline is what lets a holder learn of its loss before the
// server can give its lock to someone else. ZooKeeper's leader expires a
// session no sooner than the session timeout after it last heard from the
// client. The Session sends a sync to the leader every tenth of the timeout,
// keeps the send time of the latest one the leader is proven to have counted,
// and ends a tenth of the timeout before that proof would let the leader
// expire it. Watch notifications, late replies and ping replies prove nothing
// and never move the deadline; the deadline runs whether or not go-zookeeper
// has noticed a problem with its connection. docs/semantics.md states the
// exact conditions, server settings included.
//
// After a Session ends, a new one must be made; go-zookeeper's connection may
// carry on with a new ZooKeeper session, but this Session never follows it.
// All methods are safe for concurrent use.
type Session struct {
	*internals // what the internal packages reach (internals.go)

	conn      *zk.Conn
	owned     bool // Connect made conn, so Close and loss close it
	opts      options
	acl       []zk.ACL // of the nodes the recipes create
	parentACL []zk.ACL // of the parents they create above their paths
	rec       *telemetry.Recorder
	grantedMs atomic.Int64 // the session timeout the server granted, in ms; Connect only
	done      chan struct{}
	ready     chan struct{} // closed on the first StateHasSession
	wg        sync.WaitGroup
	ops       sync.WaitGroup // requests in flight through Retry; added to only while the session lives

	dialled     atomic.Pointer[time.Time] // when Connect's dialer last opened a connection
	regranted   chan time.Time            // Connect: a reconnect's grant, with when its connection was opened
	disconnects atomic.Int64              // connections lost; see Disconnects
	suspect     chan struct{}             // held by the one Retry call sending again after a connection closed under it

	mu          sync.Mutex // guards the fields below
	established bool
	id          int64
	state       State
	err         error
	deadline    time.Time     // the loss deadline; zero until the first proof of life
	changed     chan struct{} // closed and replaced on every state change
	readyClosed bool
	granted     time.Time     // Connect: when the connection that got the session was opened; set before ready is closed
	answered    time.Time     // when the latest keep-alive probe that was answered on this session was sent
	probed      chan struct{} // closed and replaced when answered moves
	lastClose   time.Time     // when a connection last closed under a Retry call
	solo        bool          // a Retry call sent again after a close is sending, alone (suspectTurn)
	sending     int           // other Retry calls sending (plainTurn)
	gate        chan struct{} // closed and replaced when solo or sending changes
}

func newSession(o options, owned bool) *Session {
	rec := o.recorder()
	return &Session{
		internals: znode.NewInternals(rec, owned),
		owned:     owned,
		opts:      o,
		acl:       o.nodeACL(),
		parentACL: o.parentACLs(),
		rec:       rec,
		done:      make(chan struct{}),
		ready:     make(chan struct{}),
		state:     StateConnected,
		changed:   make(chan struct{}),
		regranted: make(chan time.Time, 1),
		suspect:   make(chan struct{}, 1),
		probed:    make(chan struct{}),
		gate:      make(chan struct{}),
	}
}

// Connect opens a connection to the ensemble and waits until ZooKeeper has
// granted it a session: within ctx, and within the connect timeout (see
// WithConnectTimeout) when ctx has no earlier deadline. Each server is
// "host:port" ("host" alone means port 2181); one string may list several,
// separated by commas, and end with a chroot, as in ZooKeeper's own
// connection strings ("h1:2181,h2:2181/app": see WithChroot). An error names
// the last reason a connection attempt failed. The Session owns the
// connection: Close closes it, and so does the end of the session.
//
// Each reconnect has a tenth of the session timeout from the start of its
// dial to ZooKeeper's answer to its connect request (TLS handshake
// included), and each attempt before the session exists that or a third of
// the connect timeout, whichever is longer; a server that takes longer is
// given up on and the next one tried. ZooKeeper 3.8.0 accepts connections
// while it loads its database after a restart and never answers those
// (ZOOKEEPER-5051); without this bound, a reconnect that met one would wait
// past the loss deadline although another server could keep the session.
func Connect(ctx context.Context, servers []string, opts ...Option) (*Session, error) {
	if err := args.Context(ctx, "recipes: Connect"); err != nil {
		return nil, err
	}
	o := buildOptions(opts)
	addrs, chroot, err := parseServers(servers)
	if err != nil {
		return nil, err
	}
	switch {
	case chroot == "":
	case o.chrootSet && o.chroot != chroot:
		return nil, fmt.Errorf("%w: chroot %s in the servers and %s in WithChroot", ErrInvalid, chroot, o.chroot)
	default:
		o.chroot, o.chrootSet = chroot, true
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	if err := o.checkConnect(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("recipes: connect to %v: %w", addrs, znode.CtxErr(ctx))
	}
	ctx, cancel := context.WithTimeoutCause(ctx, o.connectTimeout,
		fmt.Errorf("no session within the connect timeout %v", o.connectTimeout))
	defer cancel()
	s := newSession(o, true)
	dial := o.dialer
	if dial == nil {
		dial = net.DialTimeout
	}
	if o.tls != nil {
		dial = tlsDialer(dial, o.tls)
	}
	var lastErr atomic.Pointer[error]
	conn, _, err := zk.Connect(addrs, o.timeout,
		zk.WithDialer(s.dialer(dial, &lastErr)), zk.WithLogger(o.logger), zk.WithEventCallback(s.onEvent))
	if err != nil {
		return nil, fmt.Errorf("recipes: connect: %w", err)
	}
	s.conn = conn
	select {
	case <-s.ready:
	case <-ctx.Done():
		conn.Close()
		err := fmt.Errorf("recipes: connect to %v: %w", addrs, znode.CtxErr(ctx))
		if last := lastErr.Load(); last != nil {
			err = fmt.Errorf("%w (last attempt: %w)", err, *last)
		}
		return nil, err
	}
	if tick := o.tickTime(s.timeout()); tick >= s.timeout() {
		conn.Close()
		return nil, fmt.Errorf("%w: the server granted a session timeout of %v, not above tickTime %v",
			ErrInvalid, s.timeout(), tick)
	}
	if err := s.addAuth(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	s.establish()
	s.wg.Go(func() { s.keepAlive(proofs{gap: relayGap(o.tickTime(s.timeout())), proof: s.granted}, nil) })
	return s, nil
}

// NewSession tracks the session of a connection the caller made with
// zk.Connect. events must be the channel zk.Connect returned, and nobody else
// may read it. Give the session timeout the connection was made with
// (WithSessionTimeout): the client-side deadline depends on it, and the
// server must have granted it unchanged.
//
// NewSession waits, within ctx, until the connection has a session and the
// leader is proven to have heard from it: two syncs sent at least
// 0.6 × tickTime apart (see WithTickTime), so about 0.3 × the session timeout
// when no tickTime is given. Close ends the Session but leaves the connection
// open.
//
// The connection's ZooKeeper session can outlive the Session: after Close,
// or after ErrSessionLost (the client-side deadline gives up first, and the
// connection may come back). The nodes of locks still held or waited for
// then live on with it. Release, and an acquire that fails, still delete
// their node when the connection has that session at the time; any node left
// goes only when the connection is closed or its session expires. So close
// the connection when the Session ends with ErrSessionLost: a new Session on
// it would queue behind its own old nodes.
//
// go-zookeeper's event channel holds a few events and drops the rest when
// full, so a session made this way also recognises expiry from the watches
// go-zookeeper drops and from a changed session id. Prefer Connect, whose
// events arrive through a callback and are never dropped.
func NewSession(ctx context.Context, conn *zk.Conn, events <-chan zk.Event, opts ...Option) (*Session, error) {
	if err := args.Context(ctx, "recipes: NewSession"); err != nil {
		return nil, err
	}
	if conn == nil || events == nil {
		return nil, fmt.Errorf("%w: NewSession needs a connection and its event channel", ErrInvalid)
	}
	o := buildOptions(opts)
	if err := o.check(); err != nil {
		return nil, err
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
			return nil, fmt.Errorf("recipes: new session: %w", znode.CtxErr(ctx))
		}
	}
	if err := s.addAuth(ctx); err != nil {
		return nil, err
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
	proven := make(chan struct{})
	s.wg.Go(func() { s.keepAlive(proofs{gap: relayGap(o.tickTime(o.timeout))}, proven) })
	select {
	case <-proven:
		return s, nil
	case <-s.done:
		err := s.Err()
		s.Close()
		return nil, err
	case <-ctx.Done():
		s.Close()
		return nil, fmt.Errorf("recipes: new session: no proof of life yet: %w", znode.CtxErr(ctx))
	}
}

// addAuth authenticates the connection with the WithAuth credentials,
// within ctx. go-zookeeper keeps them and sends them again after every
// reconnect, before any other request. Errors name the scheme, never the
// credentials.
func (s *Session) addAuth(ctx context.Context) error {
	for _, c := range s.opts.auth {
		done := make(chan error, 1)
		go func() { done <- s.conn.AddAuth(c.scheme, []byte(c.auth)) }()
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("recipes: authenticate with scheme %s: %w", c.scheme, err)
			}
		case <-ctx.Done():
			return fmt.Errorf("recipes: authenticate with scheme %s: %w", c.scheme, znode.CtxErr(ctx))
		}
	}
	return nil
}

// Chroot is the path the session's recipes work under ("" for none): see
// WithChroot.
func (s *Session) Chroot() string { return s.opts.chroot }

// ACL is the ACL of the nodes the session's recipes create at and below
// their own paths (WithACL). The caller must not modify it.
func (s *Session) ACL() []zk.ACL { return s.acl }

// ParentACL is the ACL of the container parents the session's recipes
// create above their own paths (WithParentACL). The caller must not modify
// it.
func (s *Session) ParentACL() []zk.ACL { return s.parentACL }

// establish records the session id once the first session is granted and
// catches a disconnect that slipped in before it.
func (s *Session) establish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.established = true
	s.id = s.conn.SessionID()
	s.reportStateLocked(StateConnected)
	if s.conn.State() != zk.StateHasSession {
		s.setStateLocked(StateSuspended)
	}
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

// timeout is the session timeout in force: the one the server granted when
// the session can see it, else the one asked for.
func (s *Session) timeout() time.Duration {
	if ms := s.grantedMs.Load(); ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return s.opts.timeout
}

func (s *Session) setStateLocked(st State) {
	s.state = st
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
	s.rec.State(st.String(), s.err)
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
// ErrSessionExpired, ErrSessionLost or ErrClosed. It compares the loss
// deadline with the clock itself, so a process that was paused past the
// deadline learns of the loss from Err even before the deadline's timer has
// run.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil && !s.deadline.IsZero() && !time.Now().Before(s.deadline) {
		s.finishLocked(ErrSessionLost)
	}
	return s.err
}

// setDeadline moves the loss deadline.
func (s *Session) setDeadline(t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deadline = t
}

// State returns the session's current state.
func (s *Session) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// Disconnects returns how many times the session's connection to ZooKeeper
// has been lost (each reconnection follows one), and whether the session
// can count them. A session made by Connect counts each loss as it happens,
// before the next connection delivers anything; one made by NewSession
// cannot (go-zookeeper's event channel may drop the event, and delivers it
// late), and returns 0, false.
//
// The recipes use it to tell whether two watch notifications came over one
// connection, in ZooKeeper's order: after a reconnect, go-zookeeper sets
// the watches again in a request of its own, which later requests can
// overtake. A user who sets watches of their own through Conn, and reasons
// from the order of their events, needs it for the same reason.
func (s *Session) Disconnects() (n int64, ok bool) {
	if !s.owned {
		return 0, false
	}
	return s.disconnects.Load(), true
}

// Timeout returns the session timeout in force (see WithSessionTimeout).
func (s *Session) Timeout() time.Duration { return s.timeout() }

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
