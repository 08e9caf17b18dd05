package recipes

import (
	"encoding/binary"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// reads is a net.Conn whose reads return the given chunks, one per Read.
type reads struct {
	net.Conn
	chunks [][]byte
	calls  int // Reads made
}

func (r *reads) Read(p []byte) (int, error) {
	r.calls++
	if len(r.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.chunks[0])
	if r.chunks[0] = r.chunks[0][n:]; len(r.chunks[0]) == 0 {
		r.chunks = r.chunks[1:]
	}
	return n, nil
}

func TestGrantConnReadsTheTimeoutAcrossReads(t *testing.T) {
	// A connect response: length, version, timeout 4000 ms, session id,
	// password; then a reply that must not be taken for one.
	stream := binary.BigEndian.AppendUint32(nil, 36)
	stream = binary.BigEndian.AppendUint32(stream, 0)
	stream = binary.BigEndian.AppendUint32(stream, 4000)
	stream = append(stream, make([]byte, 28)...)
	stream = append(stream, 0, 0, 0, 16, 0, 0, 0, 7, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0)
	for cut := 0; cut <= len(stream); cut++ {
		var granted atomic.Int64
		c := newGrantConn(&reads{chunks: [][]byte{stream[:cut], stream[cut:]}}, &granted, nil)
		got, err := io.ReadAll(c)
		if err != nil || len(got) != len(stream) || granted.Load() != 4000 {
			t.Fatalf("cut at %d: read %d of %d bytes (%v), timeout %d", cut, len(got), len(stream), err, granted.Load())
		}
	}
}

// TestGrantConnWatchesTheHandshake: a connection whose connect response has
// not come in full when the watch runs out is closed, after the abandon
// callback; one whose response came in full is left alone, its watch
// stopped.
func TestGrantConnWatchesTheHandshake(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	abandoned := make(chan struct{})
	c := newGrantConn(client, new(atomic.Int64), nil)
	c.watch(0, func() { close(abandoned) })
	if _, err := c.Read(make([]byte, 4)); err == nil {
		t.Fatal("a read on a connection nobody answers returned no error")
	}
	<-abandoned

	response := binary.BigEndian.AppendUint32(nil, 36)
	response = binary.BigEndian.AppendUint32(response, 0)
	response = binary.BigEndian.AppendUint32(response, 4000)
	response = append(response, make([]byte, 28)...)
	c = newGrantConn(&reads{chunks: [][]byte{response[:20], response[20:]}}, new(atomic.Int64), nil)
	c.watch(time.Hour, func() { t.Error("an answered handshake was abandoned") })
	if _, err := io.ReadFull(c, make([]byte, len(response))); err != nil {
		t.Fatal(err)
	}
	if c.state.Load() != handshakeAnswered || c.timer.Stop() {
		t.Errorf("after the whole response: state %d, and the watch was still running", c.state.Load())
	}
}

// TestGrantConnReadsPacketsThatCameTogetherAtOnce: go-zookeeper reads a
// packet's length and then its body; packets that came in one segment
// take one read of the socket between them, not two each.
func TestGrantConnReadsPacketsThatCameTogetherAtOnce(t *testing.T) {
	var segment []byte
	for _, body := range [][]byte{make([]byte, 16), make([]byte, 40), make([]byte, 7)} {
		segment = binary.BigEndian.AppendUint32(segment, uint32(len(body)))
		segment = append(segment, body...)
	}
	socket := &reads{chunks: [][]byte{segment}}
	c := newGrantConn(socket, new(atomic.Int64), nil)
	buf := make([]byte, 64)
	for i := range 3 {
		if _, err := io.ReadFull(c, buf[:4]); err != nil {
			t.Fatalf("packet %d's length: %v", i, err)
		}
		if _, err := io.ReadFull(c, buf[:binary.BigEndian.Uint32(buf[:4])]); err != nil {
			t.Fatalf("packet %d's body: %v", i, err)
		}
	}
	if socket.calls != 1 {
		t.Errorf("three packets in one segment took %d reads of the socket, not 1", socket.calls)
	}
}
