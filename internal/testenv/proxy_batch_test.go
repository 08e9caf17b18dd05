package testenv

import (
	"bytes"
	"encoding/binary"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/zkrecipes/recipes/internal/zkserver"
)

// packet returns a length-prefixed packet whose body is a request header
// (xid, opcode) and then pad bytes.
func packet(xid, op int32, pad int) []byte {
	body := binary.BigEndian.AppendUint32(nil, uint32(xid))
	body = binary.BigEndian.AppendUint32(body, uint32(op))
	body = append(body, make([]byte, pad)...)
	return slices.Concat(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body)
}

// pumpUp runs the client-to-server pump of a proxied connection between
// two in-memory pipes, whose writes reach the other end one by one, and
// returns the client's end, the server's end and the proxy.
func pumpUp(t *testing.T) (client, server net.Conn, p *Proxy) {
	t.Helper()
	clientEnd, proxyClient := net.Pipe()
	proxyServer, serverEnd := net.Pipe()
	p = &Proxy{conns: map[*proxyConn]struct{}{}}
	c := &proxyConn{client: proxyClient, server: proxyServer, done: make(chan struct{}),
		drops: map[int32]*dropRule{}, waiting: map[int32]struct{}{}}
	pumped := make(chan struct{})
	go func() { defer close(pumped); p.pump(c, true, 0) }()
	t.Cleanup(func() {
		c.close()
		clientEnd.Close()
		serverEnd.Close()
		<-pumped
	})
	return clientEnd, serverEnd, p
}

// readOnce returns what one read of conn gives: on a pipe, what one write
// of the other end sent.
func readOnce(t *testing.T, conn net.Conn) []byte {
	t.Helper()
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<16)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return buf[:n]
}

// TestProxyWritesPacketsThatCameTogetherAtOnce: packets the proxy reads
// in one go (a client's pipelined requests) go on in one write, whole and
// in order, each counted; a packet that comes alone goes on alone.
func TestProxyWritesPacketsThatCameTogetherAtOnce(t *testing.T) {
	client, server, p := pumpUp(t)
	connect := packet(0, 0, 40) // the connect request: no header, as far as the proxy cares
	burst := slices.Concat(connect, packet(1, OpCreate, 30), packet(2, OpGetChildren2, 20), packet(3, OpDelete, 10))
	go func() { _, _ = client.Write(burst) }()
	if got := readOnce(t, server); !bytes.Equal(got, burst) {
		t.Fatalf("the server's first read got %d bytes, want the %d of the burst in one write", len(got), len(burst))
	}
	if got := p.Traffic().Requests; got != 3 {
		t.Fatalf("requests counted = %d, want 3", got)
	}
	alone := packet(4, OpExists, 5)
	go func() { _, _ = client.Write(alone) }()
	if got := readOnce(t, server); !bytes.Equal(got, alone) {
		t.Fatalf("the server's next read got %x, want %x", got, alone)
	}
}

// TestProxyStallHoldsWhatCameWithAHeldPacket: a stall that begins while
// a burst is in the proxy, after its first packet passed and before its
// second did, lets the first through at once, alone, and holds the second
// until Restore.
func TestProxyStallHoldsWhatCameWithAHeldPacket(t *testing.T) {
	client, server, p := pumpUp(t)
	held := holdSignal(t, p)
	// The stall begins as the first packet of the burst is counted:
	// after it passed the gate, before it is written.
	p.Counter(func(op int32, _ string) bool {
		if op == OpCreate {
			p.gate.Hold(zkserver.Up)
		}
		return false
	})
	connect := packet(0, 0, 40)
	go func() { _, _ = client.Write(connect) }()
	if got := readOnce(t, server); !bytes.Equal(got, connect) {
		t.Fatalf("connect: got %x", got)
	}
	first, second := packet(1, OpCreate, 30), packet(2, OpGetChildren2, 20)
	go func() { _, _ = client.Write(slices.Concat(first, second)) }()
	if got := readOnce(t, server); !bytes.Equal(got, first) {
		t.Fatalf("during the stall the server got %x, want the packet that passed before it, %x", got, first)
	}
	// A write to a pipe returns only once it is read, and the pump holds
	// only after writing what passed: it holds the second packet now.
	waitOrFatal(t, held, "the proxy to hold the second packet")
	if got := p.Traffic().Requests; got != 1 {
		t.Fatalf("%d requests counted as forwarded, want 1: the second is held", got)
	}
	p.gate.Restore()
	if got := readOnce(t, server); !bytes.Equal(got, second) {
		t.Fatalf("after Restore the server got %x, want %x", got, second)
	}
}
