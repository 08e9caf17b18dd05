package recipes

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/znode"
)

// A Session is one ZooKeeper session and the connection that carries it. Every
// recipe works inside a Session: its ephemeral nodes belong to it, and a hold
// ends when the session does.
//
// A Session tracks its state (see State) and ends for good, closing Done, when
//   - ZooKeeper reports the session expired (ErrSessionExpired),
//   - while a recipe holds, waits or acquires on it, the session has gone so
//     long without proof that the leader heard from it that the leader may
//     expire it soon (ErrSessionLost, from a client-side deadline),
//   - while nothing is held or waited for, its connection has been down for
//     the whole session timeout (ErrSessionLost, as Curator's LOST), or
//   - Close is called (ErrClosed).
//
// The client-side deadline is what lets a holder learn of its loss before the
// server can give its lock to someone else. ZooKeeper's leader expires a
// session no sooner than the session timeout after it last heard from the
// client. While a recipe holds, waits or acquires, the Session sends a sync
// to the leader every tenth of the timeout, keeps the send time of the
// latest one the leader is proven to have counted, and ends a tenth of the
// timeout before that proof would let the leader expire it. Watch
// notifications, late replies and ping replies prove nothing and never move
// the deadline; the deadline runs whether or not go-zookeeper has noticed a
// problem with its connection. docs/semantics.md states the exact
// conditions, server settings included.
//
// While nothing is held or waited for, nobody is owed that warning: the
// Session probes less often (every 3/8 of the timeout, or a little longer
// with a tickTime over about 0.6 × it, which keeps a proof ready for the
// next acquisition; WithoutIdleProbes: not at all), and a deadline that
// passes then ends nothing. The next acquisition waits for a new proof
// before it begins.
//
// After a Session ends, a new one must be made; go-zookeeper's connection may
// carry on with a new ZooKeeper session, but this Session never follows it.
// All methods are safe for concurrent use.
type Session struct {
	*internals // what the internal packages reach (internals.go)

	conn      *zk.Conn
	owned     bool // Connect made conn, so Close and loss close it
	opts      options
	acl       []zk.ACL     // of the nodes the recipes create
	parentACL []zk.ACL     // of the parents they create above their paths
	grantedMs atomic.Int64 // the session timeout the server granted, in ms; Connect only
	done      chan struct{}
	ready     chan struct{} // closed on the first StateHasSession
	wg        sync.WaitGroup

	dialled     atomic.Pointer[time.Time] // when Connect's dialer last opened a connection
	socket      atomic.Pointer[grantConn] // the connection Connect's dialer last opened
	regranted   chan time.Time            // Connect: a reconnect's grant, with when its connection was opened
	disconnects atomic.Int64              // connections lost; see Disconnects
	suspect     chan struct{}             // held by the one Retry call sending again after a connection closed under it

	mu          sync.Mutex // guards the fields below
	established bool
	id          int64
	state       State
	err         error
	changed     chan struct{} // closed and replaced on every state change
	suspended   time.Time     // when the state last became StateSuspended
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
	return &Session{
		internals: znode.NewInternals(o.recorder(), owned),
		owned:     owned,
		opts:      o,
		acl:       o.nodeACL(),
		parentACL: o.parentACLs(),
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

// timeout is the session timeout in force: the one the server granted when
// the session can see it, else the one asked for.
func (s *Session) timeout() time.Duration {
	if ms := s.grantedMs.Load(); ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return s.opts.timeout
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
