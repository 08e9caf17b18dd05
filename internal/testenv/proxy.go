package testenv

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkrecipes/recipes/internal/zkserver"
	"github.com/zkrecipes/recipes/zktest"
)

// Proxy is a fault-injecting TCP proxy on 127.0.0.1 in front of one
// ZooKeeper server. Clients reach it with zk.WithDialer(p.Dialer) or by
// dialing p.Addr(). It speaks only the ZooKeeper client protocol: traffic is
// forwarded in whole length-prefixed packets (without a delay, those that
// arrive together go on together, unless a stall falls between them), so
// a stall holds whole packets and never lets part of one through.
//
// "Up" is client to server, "down" server to client. Stall holds both
// (a black hole); StallUp and StallDown hold one direction while the other
// flows (a one-way partition). Stalls accumulate (StallUp then StallDown is
// Stall); Restore ends them all and undoes Cut.
type Proxy struct {
	target string
	ln     net.Listener
	wg     sync.WaitGroup
	gate   zkserver.Gate // cut and held directions

	delay atomic.Int64 // one-way delay of new connections, in nanoseconds

	requests    atomic.Int64 // forwarded client requests, pings and syncs excluded
	syncs       atomic.Int64 // forwarded syncs
	watchEvents atomic.Int64 // forwarded watch notifications
	roundTrips  atomic.Int64 // requests sent while none of their connection's was unanswered
	unanswered  atomic.Int64 // counted requests whose reply has not reached the client
	notifying   atomic.Int64 // counted notifications that have not reached the client

	mu       sync.Mutex
	conns    map[*proxyConn]struct{}
	closed   bool
	rule     *dropRule  // armed DropReply rule not yet matched
	last     *dropRule  // most recent DropReply rule
	counters []*counter // Counter's matchers
	onHold   func()     // test hook: called when a packet is held by a stall
}

// NewProxy starts a proxy to target ("host:port") on a free loopback port.
func NewProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("testenv: proxy listen: %w", err)
	}
	p := &Proxy{target: target, ln: ln, conns: map[*proxyConn]struct{}{}}
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

// ProxyT starts a proxy to the shared server and closes it when t ends. Call
// it before connecting through it, so that the connections close first.
func ProxyT(t testing.TB) *Proxy {
	t.Helper()
	return ProxyTo(t, zktest.Servers(t)[0])
}

// ProxyTo is ProxyT to the server at target.
func ProxyTo(t testing.TB, target string) *Proxy {
	t.Helper()
	p, err := NewProxy(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("proxy close: %v", err)
		}
	})
	return p
}

// Addr returns the proxy's listening address, "127.0.0.1:port".
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Target returns the address the proxy forwards to.
func (p *Proxy) Target() string { return p.target }

// Dialer is a zk.Dialer that ignores the requested address and connects to
// the proxy, which forwards to its target.
func (p *Proxy) Dialer(network, address string, timeout time.Duration) (net.Conn, error) {
	return net.DialTimeout("tcp", p.Addr(), timeout)
}

// Cut closes every open client connection and, until Restore, closes new
// connections as soon as they are accepted.
func (p *Proxy) Cut() {
	p.gate.Cut()
	p.mu.Lock()
	conns := p.snapshotLocked()
	p.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
}

// Stall stops forwarding in both directions until Restore: open
// connections stay open and packets are held, not lost, and a new
// connection is accepted and dialed to the server but its connect request
// is held, so it gets no session. A side that closes its socket during the
// stall is seen closing only after Restore. This is a black hole.
func (p *Proxy) Stall() { p.gate.Hold(zkserver.Both) }

// StallUp holds client-to-server packets until Restore while server-to-
// client packets still flow: the server hears nothing from the client
// (not even pings, so it expires the session after its timeout) but
// replies to requests it already had, and watch notifications, reach the
// client. If the server closes the connection (for instance on expiry) the
// client sees it. A connection made during StallUp has its connect request
// held, so it gets no session.
func (p *Proxy) StallUp() { p.gate.Hold(zkserver.Up) }

// StallDown holds server-to-client packets until Restore while client-to-
// server packets still flow: the server applies requests and hears pings,
// so the session stays alive on the server, but the client gets no reply
// and no notification. A connection made during StallDown reaches the
// server, which opens (or revalidates) its session, but the client gets no
// connect response; a new session so opened expires on the server after
// its timeout.
func (p *Proxy) StallDown() { p.gate.Hold(zkserver.Down) }

// Restore undoes Cut and every stall: new connections are accepted again and
// held packets are forwarded, in order.
func (p *Proxy) Restore() { p.gate.Restore() }

// DropReply arms a one-shot rule. The first client request, on any
// connection, for which match(opcode, path) returns true is forwarded to the
// server as usual, but the server's reply to it is discarded and that client
// connection is closed, so the client sees a connection loss although the
// server applied the request. path is the request's path for path-based
// operations, the path of the first operation for multi, and "" otherwise.
// The returned channel (also available from Dropped) is closed once the
// reply has been dropped and the connection closed; it never closes if the
// matched request's connection is lost before the reply arrives. Arming a
// new rule replaces a rule that has not matched yet.
func (p *Proxy) DropReply(match func(opcode int32, path string) bool) <-chan struct{} {
	r := &dropRule{match: match, done: make(chan struct{})}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rule, p.last = r, r
	return r.done
}

// Dropped returns the channel of the most recent DropReply rule, closed once
// that rule's reply was dropped, or nil if DropReply was never called.
func (p *Proxy) Dropped() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		return nil
	}
	return p.last.done
}

// Close stops the listener, closes every connection and waits for all of
// the proxy's goroutines to exit.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	conns := p.snapshotLocked()
	p.mu.Unlock()
	err := p.ln.Close()
	for _, c := range conns {
		c.close()
	}
	p.wg.Wait()
	return err
}

func (p *Proxy) snapshotLocked() []*proxyConn {
	out := make([]*proxyConn, 0, len(p.conns))
	for c := range p.conns {
		out = append(out, c)
	}
	return out
}

func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		p.mu.Lock()
		refuse := p.gate.IsCut() || p.closed
		if !refuse {
			p.wg.Add(1)
		}
		p.mu.Unlock()
		if refuse {
			client.Close()
			continue
		}
		go p.serve(client)
	}
}

// serve dials the target for one accepted client and runs both pumps.
func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		client.Close()
		return
	}
	c := &proxyConn{
		client: client, server: server, done: make(chan struct{}),
		drops: map[int32]*dropRule{}, waiting: map[int32]struct{}{},
	}
	delay := time.Duration(p.delay.Load())
	p.mu.Lock()
	if p.gate.IsCut() || p.closed {
		p.mu.Unlock()
		c.close()
		return
	}
	p.conns[c] = struct{}{}
	p.mu.Unlock()

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pump(c, true, delay) }()
	go func() { defer wg.Done(); p.pump(c, false, delay) }()
	wg.Wait()

	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	p.forget(c)
}

// pump forwards packets from client to server (up) or server to client,
// each after delay if it is positive. The first packet in each direction is
// the connect request or response and has no header. A packet is read whole
// before it is held or forwarded; the end of the stream is held like a
// packet, and comes after the packets delayed before it. Without a delay,
// packets read together (the socket had them all) are written on together:
// the proxy then costs a read and a write a burst, not two reads and a
// write a packet, which the benchmarks, whose proxies share the machine
// with the clients and the servers, counted against the side that sent
// more packets.
func (p *Proxy) pump(c *proxyConn, up bool, delay time.Duration) {
	var line *delayLine
	var dropped *dropRule
	defer func() {
		if line != nil {
			line.close() // what was read before goes out first
		}
		c.close()
		if dropped != nil {
			close(dropped.done)
		}
	}()
	src, dst, dir := c.server, c.client, zkserver.Down
	if up {
		src, dst, dir = c.client, c.server, zkserver.Up
	}
	in := bufio.NewReaderSize(src, proxyBuffer)
	out := &batch{dst: dst}
	// A reply is marked answered before the client can read it, so that a
	// request it sends in answer is not taken for one sent meanwhile.
	answer := func(frame []byte, first bool) {
		if !up && !first {
			p.answered(c, frame)
		}
	}
	send := func(frame []byte, first bool) error {
		answer(frame, first)
		if frameBuffered(in) {
			out.add(frame)
			return nil // it goes out with the next, as they came in
		}
		if len(out.buf) == 0 {
			_, err := dst.Write(frame) // alone: no copy
			return err
		}
		out.add(frame)
		return out.flush()
	}
	if delay > 0 {
		line = newDelayLine(delay, func(frame []byte, first bool) error {
			answer(frame, first)
			_, err := dst.Write(frame)
			return err
		})
		send = line.send
	}
	// What passed the gate goes out before the pump waits at it.
	var flushErr error
	flush := func() { flushErr = out.flush() }
	for first := true; ; first = false {
		frame, err := readFrame(in)
		if !p.waitOpen(c, dir, flush) || err != nil || flushErr != nil {
			_ = out.flush()
			return
		}
		if !first {
			if up {
				p.sent(c, frame)
				p.inspectRequest(c, frame)
			} else {
				p.received(c, frame)
				if dropped = c.takeDrop(frame); dropped != nil {
					_ = out.flush()
					return
				}
			}
		}
		if err := send(frame, first); err != nil {
			return
		}
	}
}

// waitOpen blocks while dir is held, calling before, then the onHold hook,
// if it is about to. It returns false if c was closed meanwhile.
func (p *Proxy) waitOpen(c *proxyConn, dir zkserver.Direction, before func()) bool {
	return p.gate.WaitAfter(dir, c.done, func() {
		before()
		p.mu.Lock()
		hook := p.onHold
		p.mu.Unlock()
		if hook != nil {
			hook()
		}
	})
}

// proxyConn is one proxied client connection.
type proxyConn struct {
	client, server net.Conn
	done           chan struct{}
	once           sync.Once

	mu        sync.Mutex
	drops     map[int32]*dropRule // xid -> rule whose reply must be dropped
	waiting   map[int32]struct{}  // xids of counted requests not yet answered
	notifying int64               // counted notifications not yet delivered
}

func (c *proxyConn) close() {
	c.once.Do(func() {
		close(c.done)
		c.client.Close()
		c.server.Close()
	})
}
