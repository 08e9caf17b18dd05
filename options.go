package recipes

import (
	"time"

	"github.com/go-zookeeper/zk"
)

// DefaultSessionTimeout is the session timeout asked of ZooKeeper when no
// WithSessionTimeout option is given. The server may grant a different one
// (it clamps to its minSessionTimeout..maxSessionTimeout, by default 2 to 20
// ticks); a session made by Connect uses the granted value.
const DefaultSessionTimeout = 10 * time.Second

// An Option configures a Session.
type Option func(*options)

type options struct {
	timeout  time.Duration
	dialer   zk.Dialer
	logger   zk.Logger
	listener func(State)
}

func buildOptions(opts []Option) options {
	o := options{timeout: DefaultSessionTimeout, logger: quietLogger{}}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithSessionTimeout sets the session timeout. Connect asks the server for
// it; NewSession must be told the timeout its connection was made with.
// Default: DefaultSessionTimeout.
func WithSessionTimeout(d time.Duration) Option {
	return func(o *options) { o.timeout = d }
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
