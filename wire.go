package recipes

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// connectResponseHead is how much of the first packet the server sends on a
// connection the session reads: the 4-byte big-endian packet length, the
// protocol version, and the session timeout in milliseconds, both int32.
const connectResponseHead = 12

// grantConn wraps the socket go-zookeeper talks over to read the session
// timeout the server granted off the connect response, which go-zookeeper
// keeps to itself. It copies nothing else: after that response it only
// passes bytes on.
type grantConn struct {
	net.Conn
	granted *atomic.Int64 // milliseconds; written once the head is complete
	head    [connectResponseHead]byte
	have    int // bytes of head read so far; only go-zookeeper's reader touches it
}

func (c *grantConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.have < len(c.head) && n > 0 {
		c.have += copy(c.head[c.have:], p[:n])
		if c.have == len(c.head) {
			c.granted.Store(int64(int32(binary.BigEndian.Uint32(c.head[8:12]))))
		}
	}
	return n, err
}

// tlsDialer returns dial with a TLS client handshake, within the dial's
// timeout, on each connection it opens.
func tlsDialer(dial zk.Dialer, config *tls.Config) zk.Dialer {
	return func(network, addr string, timeout time.Duration) (net.Conn, error) {
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
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := c.HandshakeContext(ctx); err != nil {
			raw.Close()
			return nil, fmt.Errorf("TLS handshake with %s: %w", addr, err)
		}
		return c, nil
	}
}
