package integration_test

import (
	"encoding/binary"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/locks"
)

// failingWire makes the write of the next delete request fail with a
// broken pipe, as a reset connection's would, and closes the connection.
type failingWire struct {
	armed  atomic.Bool
	failed atomic.Int32
}

func (w *failingWire) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	return &failingConn{Conn: c, w: w}, nil
}

type failingConn struct {
	net.Conn
	w *failingWire
}

func (c *failingConn) Write(p []byte) (int, error) {
	if len(p) >= 12 && int32(binary.BigEndian.Uint32(p[8:])) == testenv.OpDelete && c.w.armed.CompareAndSwap(true, false) {
		c.w.failed.Add(1)
		_ = c.Conn.Close()
		return 0, &net.OpError{Op: "write", Net: "tcp", Err: syscall.EPIPE}
	}
	return c.Conn.Write(p)
}

// TestFailedWriteIsRetried: go-zookeeper gives a request whose write fails
// the socket's error, not zk.ErrConnectionClosed. The session takes it for
// a connection closed under the call and sends the request again once it
// has reconnected, so a release whose delete could not be written still
// deletes its node, and so does a semaphore's gate, whose delete an
// acquisition does not wait for.
func TestFailedWriteIsRetried(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	var wire failingWire
	s := connect(t, recipes.WithDialer(wire.dial))

	m := newMutex(t, s, root+"/mutex")
	h, err := m.Lock(bg())
	require.NoError(t, err)
	wire.armed.Store(true)
	require.NoError(t, h.Release(bg()), "a release whose delete's write failed")
	require.EqualValues(t, 1, wire.failed.Load(), "the delete's write failed")
	require.Empty(t, children(t, admin, root+"/mutex"))

	sem, err := locks.NewSemaphoreMutex(s, root+"/sem")
	require.NoError(t, err)
	wire.armed.Store(true)
	lease, err := sem.Lock(bg())
	require.NoError(t, err)
	eventually(t, "the gate's delete, whose write failed, to be sent again", func() bool {
		return len(children(t, admin, root+"/sem/locks")) == 0
	})
	require.EqualValues(t, 2, wire.failed.Load(), "the gate delete's write failed")
	require.NoError(t, lease.Release(bg()))
	require.Empty(t, children(t, admin, root+"/sem/leases"))
}
