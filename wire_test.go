package recipes

import (
	"encoding/binary"
	"testing"
)

// frame builds one length-prefixed packet.
func frame(payload ...int32) []byte {
	b := make([]byte, 4+4*len(payload))
	binary.BigEndian.PutUint32(b, uint32(4*len(payload)))
	for i, v := range payload {
		binary.BigEndian.PutUint32(b[4+4*i:], uint32(v))
	}
	return b
}

func TestFrameScannerFollowsPacketsAcrossReads(t *testing.T) {
	var stream []byte
	stream = append(stream, frame(0, 4000, 0, 0, 0, 0)...) // connect response: version, timeout, ...
	stream = append(stream, frame(-1, 0, 0, 3)...)         // a watch notification
	stream = append(stream, frame(-2, 0, 0)...)            // a ping reply
	stream = append(stream, frame(7)...)                   // a reply shorter than the head
	stream = append(stream, frame()...)                    // an empty packet
	stream = append(stream, frame(-1, 0, 0, 4, 5, 6, 7)...)

	// Every way of cutting the stream in two, and byte by byte, must give
	// the same packets.
	for cut := 0; cut <= len(stream); cut++ {
		var stats wireStats
		c := newCountingConn(nil, &stats)
		c.in.feed(stream[:cut])
		c.in.feed(stream[cut:])
		if c.in.index != 6 || stats.watchEvents.Load() != 2 || stats.negotiatedMs.Load() != 4000 {
			t.Fatalf("cut at %d: %d packets, %d watch events, timeout %d",
				cut, c.in.index, stats.watchEvents.Load(), stats.negotiatedMs.Load())
		}
	}
	var stats wireStats
	c := newCountingConn(nil, &stats)
	for i := range stream {
		c.in.feed(stream[i : i+1])
	}
	if c.in.index != 6 || stats.watchEvents.Load() != 2 {
		t.Fatalf("byte by byte: %d packets, %d watch events", c.in.index, stats.watchEvents.Load())
	}
}

func TestFrameScannerCountsRequestsButNotPingsOrSyncs(t *testing.T) {
	var stats wireStats
	c := newCountingConn(nil, &stats)
	c.out.feed(frame(0, 0, 0, 0, 0)) // connect request: not counted
	c.out.feed(frame(1, opPing))     // ping: not counted
	c.out.feed(frame(4, opSync, 1))  // the keep-alive's sync: not counted
	c.out.feed(frame(2, 1, 5))       // create
	c.out.feed(frame(3, 8, 5))       // getChildren
	if got := stats.requests.Load(); got != 2 {
		t.Fatalf("counted %d requests, want 2", got)
	}
}
