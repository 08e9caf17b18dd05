package integration_test

import (
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/testenv"
)

// gatedDialer dials through a proxy. It refuses every dial begun before the
// time it was given (gateUntil), records when each dial it let through
// returned, and can mute the next connection it lets through (muteNext).
type gatedDialer struct {
	proxy *testenv.Proxy

	mu      sync.Mutex
	until   time.Time     // dials begun before this are refused
	mute    chan struct{} // the next connection's replies wait for it to close; nil for none
	dialled []time.Time   // when each dial let through returned
}

var errGated = errors.New("refused by the test's dialer")

func (d *gatedDialer) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	d.mu.Lock()
	refused := time.Now().Before(d.until)
	d.mu.Unlock()
	if refused {
		return nil, errGated
	}
	c, err := d.proxy.Dialer(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dialled = append(d.dialled, time.Now())
	if d.mute != nil {
		c = &mutedConn{Conn: c, left: -1, release: d.mute, closed: make(chan struct{})}
		d.mute = nil
	}
	return c, nil
}

func (d *gatedDialer) gateUntil(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.until = t
}

// muteNext makes the next connection let through read nothing after
// ZooKeeper's connect response until release is closed.
func (d *gatedDialer) muteNext(release chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.mute = release
}

// last returns when the latest dial let through returned.
func (d *gatedDialer) last() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dialled[len(d.dialled)-1]
}

// mutedConn passes the first packet it reads, ZooKeeper's connect
// response, and holds every read after it until release is closed: the
// session is back on the server, which hears it, but no reply reaches it.
type mutedConn struct {
	net.Conn
	head      []byte // the connect response's length prefix, as read so far
	left      int    // bytes of the connect response still to pass; -1 until its length is read
	release   <-chan struct{}
	closed    chan struct{}
	closeOnce sync.Once
}

func (c *mutedConn) Read(p []byte) (int, error) {
	switch {
	case len(c.head) < 4:
		n, err := c.Conn.Read(p[:min(len(p), 4-len(c.head))])
		c.head = append(c.head, p[:n]...)
		if len(c.head) == 4 {
			c.left = int(binary.BigEndian.Uint32(c.head))
		}
		return n, err
	case c.left > 0:
		n, err := c.Conn.Read(p[:min(len(p), c.left)])
		c.left -= n
		return n, err
	}
	select {
	case <-c.release:
	case <-c.closed:
		return 0, net.ErrClosed
	}
	return c.Conn.Read(p)
}

func (c *mutedConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// TestHoldSurvivesALateReconnect: a holder cut off, reconnected, and cut
// off again gets back to its session only in the last tenth of the session
// timeout before its loss deadline, and no reply reaches it after the
// handshake until that deadline has passed. ZooKeeper revalidated the
// session at the reconnect, so the reconnect itself proves it
// (docs/semantics.md), and the hold is kept and stays the only one.
//
// The first cut is a black hole, so that no probe is answered from then on
// and the proof comes from the reconnect after it, a relay gap before its
// dial: the loss deadline is then no earlier than that dial − gap + 0.9 ×
// the timeout. The second reconnect is let through from a tenth of the
// timeout before that deadline on; go-zookeeper dials a lone server about
// once a second, so it lands within that tenth. The server, which last heard
// from the session at the first reconnect, expires it no sooner than the
// timeout after that: about three seconds after the second one.
func TestHoldSurvivesALateReconnect(t *testing.T) {
	t.Parallel()
	const timeout = 20 * time.Second
	gap := testTickTime * 6 / 10 // the relay gap, 0.6 × the tickTime the session is told (docs/semantics.md)
	admin, root := newRoot(t)
	path := root + "/lock"
	proxy := testenv.ProxyT(t)
	d := &gatedDialer{proxy: proxy}
	states := make(stateLog, 16)
	s := connect(t, recipes.WithDialer(d.dial), recipes.WithSessionTimeout(timeout),
		recipes.WithStateListener(states.listener))
	require.Equal(t, timeout, s.Timeout(), "the server granted another timeout: the scenario's times do not hold")
	held, err := newMutex(t, s, path).Lock(bg())
	require.NoError(t, err)
	id := s.ID()

	// A black hole long enough that no proof from before it can last
	// until the second reconnect; the reconnect after it proves the
	// session.
	proxy.Stall()
	// The silence is the scenario: there is no state to wait for but
	// its length.
	time.Sleep(timeout / 10)
	proxy.Cut()
	proxy.Restore()
	states.waitFor(t, recipes.StateSuspended)
	states.waitFor(t, recipes.StateReconnected)
	deadline := d.last().Add(-gap + timeout - timeout/10) // the earliest the loss deadline can be now
	reopen := deadline.Add(-timeout / 10)

	release := make(chan struct{})
	d.gateUntil(reopen)
	d.muteNext(release)
	proxy.Cut()
	proxy.Restore()
	states.waitFor(t, recipes.StateSuspended)
	states.waitFor(t, recipes.StateReconnected)
	back := time.Now()
	t.Logf("back %v before the loss deadline that the first reconnect gave, %v after the gate opened",
		deadline.Sub(back), back.Sub(reopen))
	require.True(t, back.Before(deadline), "the reconnect came after the deadline: the scenario did not happen")
	assert.Equal(t, id, s.ID())

	// No reply comes until the deadline has passed, a twentieth of the
	// timeout ago: only the reconnect can have proved the session.
	select {
	case <-held.Done():
		t.Fatalf("the hold was lost %v before the deadline that the first reconnect gave: %v",
			time.Until(deadline), held.Err())
	case <-time.After(time.Until(deadline.Add(timeout / 20))):
	}
	close(release)
	require.NoError(t, held.Err())
	assert.Equal(t, id, s.ID())
	kids := children(t, admin, path)
	require.Len(t, kids, 1)
	assert.Equal(t, held.Node(), path+"/"+kids[0])
	require.NoError(t, held.Release(bg()))
	assert.Empty(t, children(t, admin, path))
	n, _ := s.Disconnects()
	assert.Equal(t, int64(2), n)
}
