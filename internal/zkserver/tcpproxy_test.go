package zkserver

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// absent is how long a test waits to see that bytes do not arrive. Only
// absence is checked with it; nothing is synchronised on it.
const absent = 200 * time.Millisecond

// proxyPair starts a target listener and a proxy to it.
func proxyPair(t *testing.T) (*TCPProxy, net.Listener) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewTCPProxy(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("proxy close: %v", err)
		}
		ln.Close()
	})
	return p, ln
}

// dial connects through p and returns both ends.
func dial(t *testing.T, p *TCPProxy, ln net.Listener) (client, server net.Conn) {
	t.Helper()
	client, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	server = accept(t, ln, 5*time.Second)
	if server == nil {
		t.Fatal("target saw no connection")
	}
	return client, server
}

// accept returns the next connection to ln, or nil if none comes within d.
func accept(t *testing.T, ln net.Listener, d time.Duration) net.Conn {
	t.Helper()
	if err := ln.(*net.TCPListener).SetDeadline(time.Now().Add(d)); err != nil {
		t.Fatal(err)
	}
	c, err := ln.Accept()
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func send(t *testing.T, c net.Conn, s string) {
	t.Helper()
	if _, err := io.WriteString(c, s); err != nil {
		t.Fatalf("write %q: %v", s, err)
	}
}

// expect reads exactly want from c.
func expect(t *testing.T, c net.Conn, want string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, len(want))
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != want {
		t.Fatalf("read %q, %v; want %q", buf, err, want)
	}
}

// expectNothing checks that nothing, not even EOF, arrives on c for a while.
func expectNothing(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(absent))
	var b [1]byte
	if n, err := c.Read(b[:]); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read during a hold = %d %q, %v", n, b[:n], err)
	}
}

func expectEOF(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var b [1]byte
	if n, err := c.Read(b[:]); n != 0 || err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read = %d, %v; want end of stream", n, err)
	}
}

func TestTCPProxyStallUp(t *testing.T) {
	p, ln := proxyPair(t)
	client, server := dial(t, p, ln)
	p.StallUp()
	send(t, client, "up")
	send(t, server, "down")
	expect(t, client, "down")
	expectNothing(t, server)
	p.Restore()
	expect(t, server, "up")
}

func TestTCPProxyStallDown(t *testing.T) {
	p, ln := proxyPair(t)
	client, server := dial(t, p, ln)
	p.StallDown()
	send(t, client, "up")
	send(t, server, "down")
	expect(t, server, "up")
	expectNothing(t, client)
	p.Restore()
	expect(t, client, "down")
}

// A close is held like a byte: the other side sees it after Restore, after
// the bytes sent before it.
func TestTCPProxyStallHoldsClose(t *testing.T) {
	p, ln := proxyPair(t)
	client, server := dial(t, p, ln)
	p.Stall()
	send(t, client, "last")
	client.Close()
	expectNothing(t, server)
	p.Restore()
	expect(t, server, "last")
	expectEOF(t, server)
}

// A connection made during a stall is accepted by the proxy but reaches the
// target only after Restore, with what was sent meanwhile.
func TestTCPProxyStallDefersNewConnections(t *testing.T) {
	p, ln := proxyPair(t)
	p.StallUp()
	client, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	send(t, client, "hello")
	if c := accept(t, ln, absent); c != nil {
		t.Fatal("target dialed during a stall")
	}
	p.Restore()
	server := accept(t, ln, 5*time.Second)
	if server == nil {
		t.Fatal("target not dialed after Restore")
	}
	expect(t, server, "hello")
}

func TestTCPProxyCut(t *testing.T) {
	p, ln := proxyPair(t)
	client, server := dial(t, p, ln)
	p.Cut()
	expectEOF(t, client)
	expectEOF(t, server)
	// New connections are closed on accept.
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	expectEOF(t, c)
	p.Restore()
	client, server = dial(t, p, ln)
	send(t, client, "again")
	expect(t, server, "again")
}

// A connection to a target that does not listen yet is forwarded once it
// does.
func TestTCPProxyWaitsForTarget(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p, err := NewTCPProxy(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	client, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	send(t, client, "early")
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("port taken meanwhile: %v", err)
	}
	defer ln.Close()
	server := accept(t, ln, 5*time.Second)
	if server == nil {
		t.Fatal("target not dialed once listening")
	}
	expect(t, server, "early")
}
