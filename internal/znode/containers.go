package znode

import (
	"sync"

	"github.com/go-zookeeper/zk"
)

// Containers are a session's container creates in flight.
//
// go-zookeeper's CreateContainer, unlike its other calls, reads its reply
// even when Conn.Close has made it return early (with
// zk.ErrConnectionClosed), while the connection's reader may still be
// decoding that reply into it: a data race inside go-zookeeper (v1.0.4). So
// a session's connection is closed only once no container create is in
// flight on it (recipes.Session's Close), and none starts after that: each
// goes through Create, and Close stops them.
type Containers struct {
	mu     sync.Mutex
	n      int           // in flight
	closed bool          // Close was called: none starts
	idle   chan struct{} // closed when n falls to 0 after Close
}

// create calls conn.CreateContainer for path, unless Close was called, when
// it sends nothing and returns zk.ErrClosing.
func (c *Containers) create(conn *zk.Conn, path string, acl []zk.ACL) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return zk.ErrClosing
	}
	c.n++
	c.mu.Unlock()
	_, err := conn.CreateContainer(path, nil, zk.FlagContainer, acl)
	c.mu.Lock()
	if c.n--; c.n == 0 && c.idle != nil {
		close(c.idle)
	}
	c.mu.Unlock()
	return err
}

// Close stops new container creates, and returns a channel that is closed
// once none is in flight. Call it once.
func (c *Containers) Close() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	c.idle = make(chan struct{})
	if c.n == 0 {
		close(c.idle)
	}
	return c.idle
}
