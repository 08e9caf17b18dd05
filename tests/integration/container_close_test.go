package integration_test

import (
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/testenv"
)

// heldWire holds the replies on a connection once a container create has
// been written on it: its reads block until the session's close request is
// written, on any connection, or the connection is closed. So the reply to
// the create arrives just as go-zookeeper is told to close.
type heldWire struct {
	written chan struct{} // closed when the first container create is written
	release chan struct{} // closed when the close request is written: the held replies go on
	once    sync.Once
	relOnce sync.Once

	mu   sync.Mutex
	held *heldConn // the connection that carried that create
}

func newHeldWire() *heldWire {
	return &heldWire{written: make(chan struct{}), release: make(chan struct{})}
}

func (w *heldWire) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	return &heldConn{Conn: c, w: w, closed: make(chan struct{})}, nil
}

// heldClosed reports whether the connection whose replies were held has
// been closed.
func (w *heldWire) heldClosed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held == nil {
		return false
	}
	select {
	case <-w.held.closed:
		return true
	default:
		return false
	}
}

type heldConn struct {
	net.Conn
	w         *heldWire
	holding   atomic.Bool
	closed    chan struct{}
	closeOnce sync.Once
}

func (w *heldWire) letGo() { w.relOnce.Do(func() { close(w.release) }) }

func (c *heldConn) Write(p []byte) (int, error) {
	if len(p) < 12 {
		return c.Conn.Write(p)
	}
	switch int32(binary.BigEndian.Uint32(p[8:])) {
	case testenv.OpCloseSession:
		c.w.letGo()
	case testenv.OpCreateContainer:
		c.w.once.Do(func() {
			c.holding.Store(true)
			c.w.mu.Lock()
			c.w.held = c
			c.w.mu.Unlock()
			close(c.w.written)
		})
	}
	return c.Conn.Write(p)
}

// Read holds what it read once the container create is written: its reply
// cannot have been read before.
func (c *heldConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.holding.Load() {
		select {
		case <-c.w.release:
		case <-c.closed:
			return 0, net.ErrClosed
		}
	}
	return n, err
}

func (c *heldConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// TestCloseWaitsForContainerCreate: go-zookeeper's CreateContainer reads
// its reply even when Conn.Close makes it return early, while the reply may
// still be decoded into it: a data race inside go-zookeeper. A session
// closed while a lock creates its directory must not close the connection
// under that create. Here the reply to the create is held until the close
// request is written. Close closes the socket under the create, which fails
// it, and only then the connection, so the reply is never read. Closing the
// connection first (as the session did before 384a55c) lets the reply through while the
// create returns, which -race reports.
func TestCloseWaitsForContainerCreate(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	// The root exists, so the lock's container create succeeds: only a
	// reply with a body is decoded into the call.
	_, err := admin.CreateContainer(root, nil, zk.FlagContainer, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	wire := newHeldWire()
	s := connect(t, recipes.WithDialer(wire.dial))
	m := newMutex(t, s, root+"/mutex")

	locked := make(chan error, 1)
	go func() {
		_, err := m.Lock(bg())
		locked <- err
	}()
	select {
	case <-wire.written:
	case err := <-locked:
		t.Fatalf("Lock returned before it created its directory: %v", err)
	case <-time.After(waitLong):
		t.Fatal("the lock sent no container create")
	}

	closed := make(chan struct{})
	go func() {
		_ = s.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(waitLong):
		t.Fatal("Close did not return")
	}
	require.True(t, wire.heldClosed(), "Close closed the socket under the container create")
	wire.letGo()
	require.ErrorIs(t, <-locked, recipes.ErrClosed)
	require.Empty(t, children(t, admin, root+"/mutex"), "no lock node")
}
