package recipes

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/znode"
)

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
// open. Close the Session before the connection: go-zookeeper's
// CreateContainer, which the recipes use for the parents of their nodes,
// reads its reply even when Conn.Close makes it return, while the reply may
// still be arriving (a data race inside go-zookeeper v1.0.4). Session.Close
// returns only once no such call is in flight, and none starts after it.
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
