package recipes

import (
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
)

// DefaultSessionTimeout is the session timeout asked of ZooKeeper when no
// WithSessionTimeout option is given. The server may grant a different one
// (it clamps to its minSessionTimeout..maxSessionTimeout, by default 2 to 20
// ticks); a session made by Connect uses the granted value.
const DefaultSessionTimeout = 10 * time.Second

// DefaultConnectTimeout bounds how long Connect waits for a session when its
// context has no earlier deadline (Curator's default connection timeout).
const DefaultConnectTimeout = 15 * time.Second

// An Option configures a Session.
type Option func(*options)

type options struct {
	timeout        time.Duration
	connectTimeout time.Duration
	tick           time.Duration // 0: half the session timeout
	dialer         zk.Dialer
	logger         zk.Logger
	listener       func(State)
}

func buildOptions(opts []Option) options {
	o := options{timeout: DefaultSessionTimeout, connectTimeout: DefaultConnectTimeout, logger: quietLogger{}}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// check reports options no session can work with.
func (o options) check() error {
	switch {
	case o.timeout <= 0:
		return fmt.Errorf("%w: session timeout %v is not positive", ErrInvalid, o.timeout)
	case o.connectTimeout <= 0:
		return fmt.Errorf("%w: connect timeout %v is not positive", ErrInvalid, o.connectTimeout)
	case o.tick < 0:
		return fmt.Errorf("%w: tickTime %v is negative", ErrInvalid, o.tick)
	case o.tick >= o.timeout:
		return fmt.Errorf("%w: tickTime %v is not below the session timeout %v", ErrInvalid, o.tick, o.timeout)
	}
	return nil
}

// tickTime is the ensemble's tickTime as far as the session knows it, for a
// session granted timeout.
func (o options) tickTime(timeout time.Duration) time.Duration {
	if o.tick > 0 {
		return o.tick
	}
	// A server never grants less than its minSessionTimeout, which is two
	// ticks unless its operator lowered it.
	return timeout / 2
}

// WithSessionTimeout sets the session timeout. Connect asks the server for
// it; NewSession must be told the timeout its connection was made with.
// Default: DefaultSessionTimeout.
func WithSessionTimeout(d time.Duration) Option {
	return func(o *options) { o.timeout = d }
}

// WithConnectTimeout bounds how long Connect waits for ZooKeeper to grant a
// session, unless the context given to Connect ends sooner. Default:
// DefaultConnectTimeout.
func WithConnectTimeout(d time.Duration) Option {
	return func(o *options) { o.connectTimeout = d }
}

// WithTickTime tells the session the ensemble's tickTime (zoo.cfg's
// tickTime). A follower passes on to the leader that it heard from a client
// only when the leader next pings it, every tickTime/2, so the session needs
// this to know when the leader, which expires sessions, has heard from it;
// see Session. It must be below the session timeout.
//
// Default (or 0): half the session timeout, the largest tickTime of a server
// that grants that timeout with the default minSessionTimeout (2 × tickTime).
// On a server whose minSessionTimeout was lowered below that, give the real
// tickTime, or the loss guarantee does not hold. Giving the real tickTime
// when it is smaller lets the session ride out longer stalls: it ends when it
// has had no proof of life for 0.9 × the session timeout, a proof is always
// at least 0.6 × tickTime old, and a new one comes every tenth of the
// timeout. So a session rides out about 0.4 × the timeout without answers
// from ZooKeeper by default (4 s at the default 10 s), and 5.8 s at 10 s with
// a tickTime of 2 s (ZooKeeper's sample configuration): give it whenever you
// know it.
func WithTickTime(d time.Duration) Option {
	return func(o *options) { o.tick = d }
}

// WithDialer sets how Connect opens its TCP connections, as zk.WithDialer
// does. Default: net.DialTimeout. NewSession ignores it.
func WithDialer(d zk.Dialer) Option {
	return func(o *options) { o.dialer = d }
}

// WithLogger receives go-zookeeper's connection log. Default: discarded.
// NewSession ignores it.
func WithLogger(l zk.Logger) Option {
	return func(o *options) { o.logger = l }
}

// WithStateListener calls f on every state change, in order, from the
// goroutine that observed it. f must not block or call back into the session.
// Default: none.
func WithStateListener(f func(State)) Option {
	return func(o *options) { o.listener = f }
}

type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}
