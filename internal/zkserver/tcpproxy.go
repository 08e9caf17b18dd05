package zkserver

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"
)

// TCPProxy is a fault-injecting TCP forwarder on 127.0.0.1 that knows
// nothing of the protocol it carries. The ensemble puts one on every
// server-to-server link (see WithPeerProxies); tests may use it for any TCP
// service.
//
// Faults model a network, not a crashed peer:
//   - Stall, StallUp and StallDown hold bytes: they are read from one side
//     and not written to the other until Restore, in order and whole, so
//     nothing is lost and nothing is delivered early. A close (EOF) is held
//     like a byte: a side that closes while its direction is held is seen
//     closing only after Restore.
//   - While any direction is held, a new connection is accepted (the
//     dialer's connect succeeds) but the target is not dialed until
//     Restore: a partition lets no new connection through, and a target
//     that reads an accepted socket synchronously (ZooKeeper's election
//     listener does) is not blocked by a connection that never speaks.
//   - Cut closes every connection at once and closes new ones on accept,
//     like a peer that resets everything.
//
// A connection is accepted before its target is dialed, so a target that
// is not listening cannot refuse it. The proxy therefore keeps dialing a
// refusing target for up to TargetPatience, while the connection waits
// (as a retransmitted SYN would), and then closes the connection. This
// matters to ZooKeeper: a follower connects to the leader it just elected,
// possibly before that leader listens; a refused connect makes it retry,
// but a connect that succeeds and then reads EOF makes it abandon the
// leader and wait out initLimit in a new election.
type TCPProxy struct {
	target string
	ln     net.Listener
	gate   Gate
	wg     sync.WaitGroup // accept loop and one per connection

	patience time.Duration // how long a connection waits for a refusing target
	tap      func() Tap    // WithTap's; nil: none

	mu     sync.Mutex
	conns  map[*tcpConn]struct{} // accepted, dialed or waiting to be
	closed bool
}

// ProxyOption configures a TCPProxy.
type ProxyOption func(*TCPProxy)

// WithoutPatience makes the proxy dial its target once for each connection
// and close the connection if the target refuses it: what a client dialing
// a stopped server directly sees, at once, rather than after
// TargetPatience.
func WithoutPatience() ProxyOption {
	return func(p *TCPProxy) { p.patience = 0 }
}

// A Tap watches one proxied connection: See is shown the bytes from the
// target, in order, as they are forwarded, until it returns false, and
// Closed is called once the connection is closed. What it does changes
// nothing that is forwarded.
type Tap interface {
	See(down []byte) bool
	Closed()
}

// WithTap gives each connection a Tap of its own, made by newTap once the
// target is dialed.
func WithTap(newTap func() Tap) ProxyOption {
	return func(p *TCPProxy) { p.tap = newTap }
}

// TargetPatience bounds how long a TCPProxy connection waits for a refusing
// target to listen before the proxy closes it.
const TargetPatience = 5 * time.Second

// NewTCPProxy starts a proxy to target ("host:port") on a free loopback
// port.
func NewTCPProxy(target string, opts ...ProxyOption) (*TCPProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("zkserver: proxy listen: %w", err)
	}
	p := &TCPProxy{target: target, ln: ln, conns: map[*tcpConn]struct{}{}, patience: TargetPatience}
	for _, o := range opts {
		o(p)
	}
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

// Addr returns the proxy's listening address, "127.0.0.1:port".
func (p *TCPProxy) Addr() string { return p.ln.Addr().String() }

// Target returns the address the proxy forwards to.
func (p *TCPProxy) Target() string { return p.target }

func (p *TCPProxy) port() string {
	return strconv.Itoa(p.ln.Addr().(*net.TCPAddr).Port)
}

// Cut closes every connection and, until Restore, closes new connections
// as soon as they are accepted.
func (p *TCPProxy) Cut() {
	p.gate.Cut()
	for _, c := range p.snapshot() {
		c.close()
	}
}

// Drop closes every connection open now; new ones are forwarded as before.
func (p *TCPProxy) Drop() {
	for _, c := range p.snapshot() {
		c.close()
	}
}

// Stall holds bytes in both directions until Restore: a black hole that
// keeps connections open.
func (p *TCPProxy) Stall() { p.gate.Hold(Both) }

// StallUp holds bytes from the dialing side to the target until Restore;
// bytes from the target still flow.
func (p *TCPProxy) StallUp() { p.gate.Hold(Up) }

// StallDown holds bytes from the target to the dialing side until Restore;
// bytes to the target still flow.
func (p *TCPProxy) StallDown() { p.gate.Hold(Down) }

// Restore undoes Cut and every stall: held bytes are forwarded, waiting
// connections are dialed and new connections are accepted again.
func (p *TCPProxy) Restore() { p.gate.Restore() }

// Close stops the listener, closes every connection and waits for the
// proxy's goroutines to exit.
func (p *TCPProxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	for _, c := range p.snapshot() {
		c.close()
	}
	p.wg.Wait()
	return err
}

func (p *TCPProxy) snapshot() []*tcpConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*tcpConn, 0, len(p.conns))
	for c := range p.conns {
		out = append(out, c)
	}
	return out
}

func (p *TCPProxy) acceptLoop() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		c := &tcpConn{client: client, done: make(chan struct{})}
		p.mu.Lock()
		refuse := p.closed || p.gate.IsCut()
		if !refuse {
			p.conns[c] = struct{}{}
			p.wg.Add(1)
		}
		p.mu.Unlock()
		if refuse {
			client.Close()
			continue
		}
		go p.serve(c)
	}
}

// serve dials the target once nothing is held and forwards until either
// side closes.
func (p *TCPProxy) serve(c *tcpConn) {
	defer p.wg.Done()
	defer func() {
		c.close()
		p.mu.Lock()
		delete(p.conns, c)
		p.mu.Unlock()
	}()
	if !p.gate.Wait(Both, c.done) {
		return
	}
	server, err := p.dialTarget(c)
	if err != nil {
		return
	}
	if !c.setServer(server) {
		return
	}
	var wg sync.WaitGroup
	wg.Add(2)
	var tap Tap
	if p.tap != nil {
		tap = p.tap()
		defer tap.Closed()
	}
	go func() { defer wg.Done(); p.pump(c, c.client, server, Up, nil) }()
	go func() { defer wg.Done(); p.pump(c, server, c.client, Down, tap) }()
	wg.Wait()
}

// dialTarget dials the target, retrying for up to its patience while c is
// open.
func (p *TCPProxy) dialTarget(c *tcpConn) (net.Conn, error) {
	deadline := time.Now().Add(p.patience)
	for {
		server, err := net.DialTimeout("tcp", p.target, TargetPatience)
		if err == nil || time.Now().After(deadline) {
			return server, err
		}
		select {
		case <-c.done:
			return nil, err
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// pump copies src to dst, holding each chunk, and the final EOF or error,
// while dir is held, and shows each chunk to tap until it returns false.
// Whatever ends it closes both sides.
func (p *TCPProxy) pump(c *tcpConn, src, dst net.Conn, dir Direction, tap Tap) {
	defer c.close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if !p.gate.Wait(dir, c.done) {
			return
		}
		if n > 0 {
			if tap != nil && !tap.See(buf[:n]) {
				tap = nil
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// tcpConn is one proxied connection.
type tcpConn struct {
	client net.Conn
	done   chan struct{} // closed by close
	once   sync.Once

	mu     sync.Mutex
	server net.Conn // nil until dialed
	closed bool
}

// setServer records the dialed server side. It returns false, closing
// server, if c was closed meanwhile.
func (c *tcpConn) setServer(server net.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		server.Close()
		return false
	}
	c.server = server
	return true
}

func (c *tcpConn) close() {
	c.once.Do(func() {
		c.mu.Lock()
		c.closed = true
		server := c.server
		c.mu.Unlock()
		close(c.done)
		c.client.Close()
		if server != nil {
			server.Close()
		}
	})
}
