package testenv

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
)

// Silent is a listener on 127.0.0.1 that accepts connections and never
// answers them: it reads and discards what a client sends, and closes a
// connection only when the client closes it or Close is called. ZooKeeper
// 3.8.0 does this with a connect request that reaches it while it loads its
// database at startup (ZOOKEEPER-5051), and so does a server whose process is
// stopped: the kernel accepts for it. A Silent made with a TLS config
// completes the TLS handshake first, as ZooKeeper's TLS port does, and is
// silent inside it.
type Silent struct {
	ln  net.Listener
	tls *tls.Config // nil for plain TCP
	wg  sync.WaitGroup

	mu       sync.Mutex // guards the fields below
	conns    map[net.Conn]struct{}
	accepted int           // connections accepted
	hungUp   int           // connections the client closed
	changed  chan struct{} // closed and replaced when a count changes
	closed   bool
}

// NewSilent starts a Silent listener on a free loopback port, speaking TLS
// with config if it is not nil.
func NewSilent(config *tls.Config) (*Silent, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("testenv: silent listen: %w", err)
	}
	s := &Silent{ln: ln, tls: config, conns: map[net.Conn]struct{}{}, changed: make(chan struct{})}
	s.wg.Go(s.acceptLoop)
	return s, nil
}

// SilentT starts a plain Silent listener and closes it when t ends. Call it
// before connecting to it, so that the connections close first.
func SilentT(t testing.TB) *Silent {
	t.Helper()
	return SilentTLST(t, nil)
}

// SilentTLST is SilentT with a TLS listener using config (see
// CA.ServerConfig); nil means plain TCP.
func SilentTLST(t testing.TB, config *tls.Config) *Silent {
	t.Helper()
	s, err := NewSilent(config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("silent listener close: %v", err)
		}
	})
	return s
}

// Addr returns the listening address, "127.0.0.1:port".
func (s *Silent) Addr() string { return s.ln.Addr().String() }

// Accepted returns how many connections the listener has accepted.
func (s *Silent) Accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted
}

// HungUp returns how many of them their client has closed.
func (s *Silent) HungUp() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hungUp
}

// Wait returns nil once done(accepted, hungUp) is true of the counts, or
// ctx's error first.
func (s *Silent) Wait(ctx context.Context, done func(accepted, hungUp int) bool) error {
	for {
		s.mu.Lock()
		ok, changed := done(s.accepted, s.hungUp), s.changed
		s.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("testenv: silent listener: %w", context.Cause(ctx))
		}
	}
}

// Close stops the listener, closes every connection and waits for the
// listener's goroutines to exit.
func (s *Silent) Close() error {
	s.mu.Lock()
	s.closed = true
	conns := make([]net.Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	err := s.ln.Close()
	for _, c := range conns {
		c.Close()
	}
	s.wg.Wait()
	return err
}

func (s *Silent) acceptLoop() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.accepted++
		s.changedLocked()
		s.mu.Unlock()
		s.wg.Go(func() { s.drain(c) })
	}
}

// drain reads and discards what the client sends until it closes the
// connection (or Close does); over TLS, the first read completes the
// handshake.
func (s *Silent) drain(c net.Conn) {
	var r io.Reader = c
	if s.tls != nil {
		r = tls.Server(c, s.tls)
	}
	_, _ = io.Copy(io.Discard, r)
	c.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
	if !s.closed {
		s.hungUp++
		s.changedLocked()
	}
}

func (s *Silent) changedLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}
