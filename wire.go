package recipes

import (
	"encoding/binary"
	"net"
	"sync/atomic"
)

// ZooKeeper wire facts the session reads off its own socket. Each packet is a
// 4-byte big-endian length and a payload. The first packet each way is the
// connect request/response; after it, requests start with xid and opcode and
// replies with xid, where xid -1 marks a watch notification.
const (
	frameHeadLen = 12 // enough payload to read xid+opcode or version+timeout
	opSync       = 9
	opPing       = 11
	xidWatch     = -1
)

// wireStats counts what crossed the socket, for Session.Stats.
type wireStats struct {
	requests     atomic.Int64 // client→server packets, pings and syncs excluded
	watchEvents  atomic.Int64 // server→client watch notifications
	negotiatedMs atomic.Int64 // session timeout the server granted
}

// frameScanner follows packet boundaries in one direction of a stream and
// reports each packet's index and first bytes; it copies nothing else.
type frameScanner struct {
	head    [4 + frameHeadLen]byte
	have    int // bytes of head collected for the current packet
	bodyLen int // payload length of the current packet, once known
	skip    int // payload bytes still to pass over
	index   int // packets completed so far
	onFrame func(index int, head []byte)
}

func (f *frameScanner) feed(p []byte) {
	for len(p) > 0 {
		if f.skip > 0 {
			n := min(f.skip, len(p))
			f.skip -= n
			p = p[n:]
			continue
		}
		want := 4
		if f.have >= 4 {
			want = 4 + min(f.bodyLen, frameHeadLen)
		}
		n := copy(f.head[f.have:want], p)
		f.have += n
		p = p[n:]
		if f.have == 4 {
			f.bodyLen = int(binary.BigEndian.Uint32(f.head[:4]))
			want = 4 + min(f.bodyLen, frameHeadLen)
		}
		if f.have == want && f.have >= 4 {
			f.onFrame(f.index, f.head[4:want])
			f.index++
			f.skip = f.bodyLen - (want - 4)
			f.have = 0
		}
	}
}

// countingConn wraps the socket go-zookeeper talks over. It is how the session
// knows which session timeout the server granted, which go-zookeeper keeps to
// itself, and what Stats counts.
type countingConn struct {
	net.Conn
	stats *wireStats
	in    frameScanner // only the go-zookeeper reader goroutine touches it
	out   frameScanner // only the go-zookeeper writer touches it
}

func newCountingConn(c net.Conn, stats *wireStats) *countingConn {
	cc := &countingConn{Conn: c, stats: stats}
	cc.in.onFrame = func(i int, head []byte) {
		switch {
		case i == 0 && len(head) >= 8:
			stats.negotiatedMs.Store(int64(int32(binary.BigEndian.Uint32(head[4:8]))))
		case i > 0 && len(head) >= 4 && int32(binary.BigEndian.Uint32(head[:4])) == xidWatch:
			stats.watchEvents.Add(1)
		}
	}
	cc.out.onFrame = func(i int, head []byte) {
		if i == 0 || len(head) < 8 {
			return
		}
		// The session's own keep-alive syncs are not the recipes' traffic.
		if op := int32(binary.BigEndian.Uint32(head[4:8])); op != opPing && op != opSync {
			stats.requests.Add(1)
		}
	}
	return cc
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.in.feed(p[:n])
	}
	return n, err
}

// Write counts a request before sending it: the reply can reach its caller
// before this Write returns, and Stats must already include it by then.
func (c *countingConn) Write(p []byte) (int, error) {
	c.out.feed(p)
	return c.Conn.Write(p)
}
