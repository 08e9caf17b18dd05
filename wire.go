package recipes

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/znode"
)

// connectResponseHead is how much of the first packet the server sends on a
// connection the session reads: the 4-byte big-endian packet length, the
// protocol version, and the session timeout in milliseconds, both int32.
const connectResponseHead = 12

// The states of a grantConn's handshake.
const (
	handshakeWaiting   int32 = iota // the connect response is not read in full yet
	handshakeAnswered               // it is
	handshakeAbandoned              // not in time: the connection was closed
)

// grantConn wraps the socket go-zookeeper talks over. It reads the session
// timeout the server granted off the connect response, which go-zookeeper
// keeps to itself, and, when watched, closes the connection if that response
// is not read in full in time (see handshakeBound), and it shows the
// packets written to sent. It changes nothing: after that response it
// only passes bytes on, through its read buffer.
//
// It reads through a buffer: go-zookeeper reads each packet's length and
// then its body, straight off the connection, two reads a packet (two
// system calls on a plain socket), where one read of the buffer's size
// mostly takes both, and often the next packet too (the replies of requests sent together, a watch's event with
// the reply that follows it). A read returns what the buffer holds without
// waiting for more, so nothing reaches go-zookeeper later than it would
// have.
type grantConn struct {
	net.Conn
	in      *bufio.Reader // over Conn
	granted *atomic.Int64 // milliseconds; written once the response is complete
	sent    *znode.Sent   // told of each packet written; nil: not told

	// Only go-zookeeper's reader touches these.
	head     [connectResponseHead]byte
	have     int  // bytes of the connect response read so far
	answered bool // the connect response is read in full

	state atomic.Int32 // handshakeWaiting, handshakeAnswered or handshakeAbandoned
	timer *time.Timer  // the watch; nil when not watched
}

// readBuffer is the size of a grantConn's read buffer: most packets, and
// more than one of the small ones that a lock's requests bring back.
const readBuffer = 4 << 10

func newGrantConn(c net.Conn, granted *atomic.Int64, sent *znode.Sent) *grantConn {
	return &grantConn{Conn: c, in: bufio.NewReaderSize(c, readBuffer), granted: granted, sent: sent}
}

// watch closes the connection, after calling abandon, if the connect
// response is not read in full within d. Call it before the connection is
// used.
func (c *grantConn) watch(d time.Duration, abandon func()) {
	c.timer = time.AfterFunc(d, func() {
		if c.state.CompareAndSwap(handshakeWaiting, handshakeAbandoned) {
			abandon()
			// go-zookeeper's read or write fails, and it tries the next
			// server.
			c.Conn.Close()
		}
	})
}

func (c *grantConn) Read(p []byte) (int, error) {
	n, err := c.in.Read(p)
	if n > 0 && !c.answered {
		if c.have < len(c.head) {
			copy(c.head[c.have:], p[:n])
		}
		c.have += n
		if c.have >= 4 && c.have >= 4+int(binary.BigEndian.Uint32(c.head[:4])) {
			c.answered = true
			if c.have >= len(c.head) {
				c.granted.Store(int64(int32(binary.BigEndian.Uint32(c.head[8:12]))))
			}
			if c.state.CompareAndSwap(handshakeWaiting, handshakeAnswered) && c.timer != nil {
				c.timer.Stop()
			}
		}
	}
	return n, err
}

// Write shows p to sent and passes it on. go-zookeeper writes one whole
// packet per call, from one goroutine: a request queued once sent has
// seen p is written after p. Seeing p before it is written, not after,
// matters: the reply can come back, and the create return, before the
// writing goroutine runs again.
func (c *grantConn) Write(p []byte) (int, error) {
	if c.sent != nil {
		c.sent.Written(p)
	}
	return c.Conn.Write(p)
}

func (c *grantConn) Close() error {
	if c.timer != nil {
		c.timer.Stop()
	}
	return c.Conn.Close()
}

// tlsDialer returns dial with a TLS client handshake on each connection it
// opens, both within the dial's timeout.
func tlsDialer(dial zk.Dialer, config *tls.Config) zk.Dialer {
	return func(network, addr string, timeout time.Duration) (net.Conn, error) {
		deadline := time.Now().Add(timeout)
		raw, err := dial(network, addr, timeout)
		if err != nil {
			return nil, err
		}
		cfg := config
		if cfg.ServerName == "" {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				host = addr
			}
			cfg = config.Clone()
			cfg.ServerName = host
		}
		c := tls.Client(raw, cfg)
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		if err := c.HandshakeContext(ctx); err != nil {
			raw.Close()
			return nil, fmt.Errorf("TLS handshake with %s: %w", addr, err)
		}
		return c, nil
	}
}
