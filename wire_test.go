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
}

func (r *reads) Read(p []byte) (int, error) {
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
		c := &grantConn{Conn: &reads{chunks: [][]byte{stream[:cut], stream[cut:]}}, granted: &granted}
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
	c := &grantConn{Conn: client, granted: new(atomic.Int64)}
	c.watch(0, func() { close(abandoned) })
	if _, err := c.Read(make([]byte, 4)); err == nil {
		t.Fatal("a read on a connection nobody answers returned no error")
	}
	<-abandoned

	response := binary.BigEndian.AppendUint32(nil, 36)
	response = binary.BigEndian.AppendUint32(response, 0)
	response = binary.BigEndian.AppendUint32(response, 4000)
	response = append(response, make([]byte, 28)...)
	c = &grantConn{Conn: &reads{chunks: [][]byte{response[:20], response[20:]}}, granted: new(atomic.Int64)}
	c.watch(time.Hour, func() { t.Error("an answered handshake was abandoned") })
	if _, err := io.ReadFull(c, make([]byte, len(response))); err != nil {
		t.Fatal(err)
	}
	if c.state.Load() != handshakeAnswered || c.timer.Stop() {
		t.Errorf("after the whole response: state %d, and the watch was still running", c.state.Load())
	}
}
