package integration_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/zktest"
)

// A server that accepts a connection and never answers it (ZooKeeper 3.8.0
// while it loads its database, ZOOKEEPER-5051) must cost a session no more
// than a tenth of its timeout: the session gives up on it and goes to the
// next server, keeping its holds.

// TestReconnectSkipsASilentServer puts a listener that accepts and never
// answers among the servers of a real ensemble, and cuts the holder's
// connection until its reconnect lands there: it moves on to a real server
// with its session and its hold.
func TestReconnectSkipsASilentServer(t *testing.T) {
	e := zktest.StartEnsemble(t, 3)
	admin := zktest.Connect(t, e.Servers())
	path := zktest.Root(t, admin) + "/lock"
	silent := testenv.SilentT(t)
	servers := append([]string{silent.Addr()}, e.Servers()...)
	d := dials{refused: silent.Addr()} // until the lock is held
	// Twice the usual timeout, so that a handshake slowed by a loaded
	// machine is not taken for a silent server.
	s := connectTo(t, servers, recipes.WithDialer(d.dial), recipes.WithSessionTimeout(2*testSessionTimeout))
	id := s.ID()
	held, err := newMutex(t, s, path).Lock(bg())
	require.NoError(t, err)
	d.refuse("")

	// go-zookeeper tries the servers one after another in an order of its
	// own: cutting the connection at most once per other server makes it
	// dial the silent one.
	for range len(servers) - 1 {
		if slices.Contains(d.dialled(), silent.Addr()) {
			break
		}
		n := d.close()
		d.wait(t, n+1)
		if d.last() != silent.Addr() {
			require.NoError(t, s.WaitConnected(bg()), "lost on a cut to a live server")
		}
	}
	require.Contains(t, d.dialled(), silent.Addr(), "the session never tried the silent server")

	// The session's own loss deadline bounds this wait.
	require.NoError(t, s.WaitConnected(bg()), "the session did not get past the silent server")
	assert.Equal(t, id, s.ID(), "a new session")
	assert.NoError(t, held.Err(), "the hold was lost")
	assert.NoError(t, held.Context().Err())
	ctx, cancel := context.WithTimeout(bg(), s.Timeout())
	defer cancel()
	assert.NoError(t, silent.Wait(ctx, func(_, hungUp int) bool { return hungUp >= 1 }),
		"the session never closed its connection to the silent server")
	require.NoError(t, held.Release(bg()))
}

// TestStandaloneRestartWithASilentStartup restarts a standalone server under
// three clients. One redials every few milliseconds, so that its first
// connection lands as the server starts listening: in ZooKeeper 3.8.0's
// silent startup window, in most runs. The others, a holder and a
// waiter, redial once a second into a listener that accepts and does not
// answer, as the starting server does, whatever the timing. All three
// reattach to their sessions, no hold is lost, and the waiter gets the lock
// when it is released.
func TestStandaloneRestartWithASilentStartup(t *testing.T) {
	t.Parallel()
	srv := zktest.Start(t)
	// Long enough to ride out a JVM restart on a loaded machine.
	const timeout = 40 * time.Second
	long := recipes.WithSessionTimeout(timeout)
	var eagerLog testenv.Buffer
	// go-zookeeper pauses a second each time round its list: with the
	// server listed five times, it redials without a pause most of the time.
	eager := connectTo(t, slices.Repeat(srv.Servers(), 5), long, recipes.WithDialer(redial),
		recipes.WithSlog(slog.New(slog.NewTextHandler(&eagerLog, nil))))
	eagerID := eager.ID()
	root := zktest.Root(t, eager.Conn())
	path := root + "/lock"
	eagerHeld, err := newMutex(t, eager, root+"/eager").Lock(bg())
	require.NoError(t, err)

	type client struct {
		s        *recipes.Session
		id       int64
		silent   *testenv.Silent
		starting atomic.Bool // dials reach the silent listener
	}
	connectClient := func() *client {
		c := &client{silent: testenv.SilentT(t)}
		dial := func(network, addr string, d time.Duration) (net.Conn, error) {
			if c.starting.Load() {
				addr = c.silent.Addr()
			}
			return net.DialTimeout(network, addr, d)
		}
		c.s = connectTo(t, srv.Servers(), long, recipes.WithDialer(dial))
		c.id = c.s.ID()
		return c
	}
	holder, waiter := connectClient(), connectClient()
	held, err := newMutex(t, holder.s, path).Lock(bg())
	require.NoError(t, err)
	queued := newMutex(t, waiter.s, path)
	got := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(bg(), 3*timeout)
		defer cancel()
		h, err := queued.Lock(ctx)
		if err == nil {
			err = h.Release(bg())
		}
		got <- err
	}()
	waitQueued(t, eager.Conn(), path, 2)

	for _, c := range []*client{holder, waiter} {
		c.starting.Store(true)
	}
	require.NoError(t, srv.Restart())

	// The session's own loss deadline bounds this wait, and the ones below.
	require.NoError(t, eager.WaitConnected(bg()), "the eager session did not get past the startup")
	assert.Equal(t, eagerID, eager.ID(), "a new eager session")
	assert.NoError(t, eagerHeld.Err(), "the eager session's hold was lost")
	t.Logf("real startup windows the eager session met and left: %d",
		strings.Count(eagerLog.String(), "zookeeper server did not answer"))
	require.NoError(t, eagerHeld.Release(bg()))

	for _, c := range []*client{holder, waiter} {
		// go-zookeeper redials a standalone server once a second.
		require.NoError(t, c.silent.Wait(untilDone(t, c.s), func(accepted, _ int) bool { return accepted >= 1 }),
			"no redial met the startup")
		c.starting.Store(false)
	}
	for _, c := range []*client{holder, waiter} {
		require.NoError(t, c.s.WaitConnected(bg()), "the session did not get past the startup")
		assert.Equal(t, c.id, c.s.ID(), "a new session")
		assert.GreaterOrEqual(t, c.silent.HungUp(), 1, "the session never closed its silent connection")
	}
	assert.NoError(t, held.Err(), "the hold was lost")
	select {
	case err := <-got:
		t.Fatalf("the waiter finished while the lock was held: %v", err)
	default:
	}
	require.NoError(t, held.Release(bg()))
	require.NoError(t, <-got, "the waiter did not get the lock")
}

// redial is a dialer that dials addr again every few milliseconds while
// nothing listens there, within the timeout.
func redial(network, addr string, timeout time.Duration) (net.Conn, error) {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout(network, addr, time.Until(deadline))
		if err == nil || time.Until(deadline) < 10*time.Millisecond {
			return c, err
		}
		time.Sleep(2 * time.Millisecond) // the redial cadence, not a wait for a state
	}
}

// TestTLSConnectSkipsASilentServer: over TLS, a first connection whose TLS
// handshake completes and whose connect request is never answered is given
// up on too, and Connect gets its session from the next attempt.
func TestTLSConnectSkipsASilentServer(t *testing.T) {
	t.Parallel()
	srv := testenv.StartTLST(t)
	silent := testenv.SilentTLST(t, srv.CA.ServerConfig(t))
	var first atomic.Bool
	dial := func(network, addr string, d time.Duration) (net.Conn, error) {
		if first.CompareAndSwap(false, true) {
			addr = silent.Addr()
		}
		return net.DialTimeout(network, addr, d)
	}
	const timeout = recipes.DefaultSessionTimeout
	s, err := recipes.Connect(bg(), []string{srv.SecureAddr}, recipes.WithTLS(srv.CA.ClientConfig()),
		recipes.WithDialer(dial), recipes.WithSessionTimeout(timeout), recipes.WithConnectTimeout(2*timeout))
	require.NoError(t, err, "no session after a silent first server")
	defer s.Close()
	assert.Equal(t, 1, silent.Accepted())
	ctx, cancel := context.WithTimeout(bg(), timeout)
	defer cancel()
	assert.NoError(t, silent.Wait(ctx, func(_, hungUp int) bool { return hungUp == 1 }),
		"the session never closed its connection to the silent server")
	h, err := newMutex(t, s, "/tls-silent/lock").Lock(bg())
	require.NoError(t, err)
	require.NoError(t, h.Release(bg()))
}

// TestConnectNamesASilentServer: when no server answers, Connect's error
// says which one accepted the connection and did not answer, and within
// what bound: before a session exists, a third of the connect timeout (a
// tenth of the session timeout would be 100ms here).
func TestConnectNamesASilentServer(t *testing.T) {
	t.Parallel()
	silent := testenv.SilentT(t)
	const timeout = time.Second
	_, err := recipes.Connect(bg(), []string{silent.Addr()},
		recipes.WithSessionTimeout(timeout), recipes.WithConnectTimeout(3*timeout))
	require.Error(t, err)
	assert.Contains(t, err.Error(), silent.Addr()+" accepted the connection but did not answer it within 1s")
	ctx, cancel := context.WithTimeout(bg(), waitLong)
	defer cancel()
	assert.NoError(t, silent.Wait(ctx, func(accepted, hungUp int) bool { return accepted >= 1 && hungUp == accepted }),
		"a connection to the silent server was left open")
}

// untilDone returns a context cancelled when s ends, with its error as the
// cause, or when t ends.
func untilDone(t *testing.T, s *recipes.Session) context.Context {
	ctx, cancel := context.WithCancelCause(bg())
	t.Cleanup(func() { cancel(nil) })
	go func() {
		select {
		case <-s.Done():
			cancel(s.Err())
		case <-ctx.Done():
		}
	}()
	return ctx
}

// dials is a zk.Dialer that keeps the connections it opened, so that a test
// can close the current one as a server that goes away would.
type dials struct {
	mu      sync.Mutex // guards the fields below
	refused string     // an address not dialled, as if nothing listened there
	addrs   []string
	conns   []net.Conn
	changed chan struct{} // closed and replaced on every dial; nil until the first wait
}

func (d *dials) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	d.mu.Lock()
	refused := addr == d.refused
	d.mu.Unlock()
	if refused {
		return nil, fmt.Errorf("dial %s: refused by the test", addr)
	}
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.addrs, d.conns = append(d.addrs, addr), append(d.conns, c)
	if d.changed != nil {
		close(d.changed)
		d.changed = nil
	}
	return c, nil
}

// refuse makes dial refuse addr ("" for none).
func (d *dials) refuse(addr string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.refused = addr
}

// last returns the address of the latest connection.
func (d *dials) last() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.addrs) == 0 {
		return ""
	}
	return d.addrs[len(d.addrs)-1]
}

// dialled returns the addresses dialled so far, in order.
func (d *dials) dialled() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.addrs)
}

// close closes the latest connection and returns how many were opened.
func (d *dials) close() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if n := len(d.conns); n > 0 {
		_ = d.conns[n-1].Close()
	}
	return len(d.conns)
}

// wait waits until n connections have been opened.
func (d *dials) wait(t *testing.T, n int) {
	t.Helper()
	timer := time.NewTimer(waitLong)
	defer timer.Stop()
	for {
		d.mu.Lock()
		if len(d.conns) >= n {
			d.mu.Unlock()
			return
		}
		if d.changed == nil {
			d.changed = make(chan struct{})
		}
		changed := d.changed
		d.mu.Unlock()
		select {
		case <-changed:
		case <-timer.C:
			t.Fatalf("no new connection within %v", waitLong)
		}
	}
}
