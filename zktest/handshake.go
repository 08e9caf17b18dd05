package zktest

import (
	"net"
	"sync"
	"time"
)

// sockets dials as go-zookeeper does by default, and closes a connection
// on which the server has sent nothing within bound. ZooKeeper
// 3.8.0 accepts connections before it has loaded its database and may then
// never answer the connect request (ZOOKEEPER-5051), and go-zookeeper waits
// for that answer for ten times its receive timeout, far longer than the
// session lives: a harness client that redials into a restarting server's
// startup window would lose its session. Closing the silent connection sends
// go-zookeeper on to its next attempt, which finds the server ready.
//
// It also keeps the connection it dialed last, so that a test's cleanup
// can close it (closeLast) once go-zookeeper has had its chance to close
// the session: go-zookeeper itself waits for the server's answer, for two
// thirds of the session timeout, which never comes through a Proxy that
// cut it off.
type sockets struct {
	bound time.Duration
	mu    sync.Mutex
	last  net.Conn
}

func (s *sockets) dial(network, address string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, address, timeout)
	if err != nil {
		return nil, err
	}
	hc := &handshakeConn{Conn: c}
	hc.timer = time.AfterFunc(s.bound, func() { _ = c.Close() })
	s.mu.Lock()
	s.last = hc
	s.mu.Unlock()
	return hc, nil
}

// closeLast closes the connection dialed last, if any.
func (s *sockets) closeLast() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last != nil {
		_ = s.last.Close()
	}
}

// handshakeConn is a connection whose timer closes it unless the server's
// first bytes arrive in time.
type handshakeConn struct {
	net.Conn
	timer *time.Timer
	once  sync.Once // stops the timer at the first data read or at Close
}

func (c *handshakeConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.once.Do(func() { c.timer.Stop() })
	}
	return n, err
}

func (c *handshakeConn) Close() error {
	c.once.Do(func() { c.timer.Stop() })
	return c.Conn.Close()
}
