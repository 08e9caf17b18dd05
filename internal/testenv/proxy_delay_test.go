package testenv

import (
	"encoding/binary"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/zktest"
)

// echoServer accepts connections and sends every byte back, until t ends.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	return ln.Addr().String()
}

// echoFrame is a packet of 16 bytes after its length: as a request, xid i
// and opcode Exists with an empty path; echoed back, a reply to xid i.
func echoFrame(i int) []byte {
	f := make([]byte, 4+16)
	binary.BigEndian.PutUint32(f[0:], 16)
	binary.BigEndian.PutUint32(f[4:], uint32(i))
	binary.BigEndian.PutUint32(f[8:], uint32(OpExists))
	return f
}

// Through a delaying proxy, packets come back in order, each no sooner than
// the delay each way, and packets sent together overlap: a burst costs one
// round trip, in time and in Traffic.RoundTrips.
func TestProxyDelayKeepsOrderAndOverlaps(t *testing.T) {
	t.Parallel()
	const delay, burst = 50 * time.Millisecond, 20
	p, err := NewProxy(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	p.SetDelay(delay)
	c, err := p.Dialer("tcp", "", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	var out []byte
	for i := range burst + 1 { // the first is the connect request
		out = append(out, echoFrame(i)...)
	}
	start := time.Now()
	if _, err := c.Write(out); err != nil {
		t.Fatal(err)
	}
	for i := range burst + 1 {
		frame, err := readFrame(c)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if took := time.Since(start); took < 2*delay {
				t.Fatalf("first packet back after %v, want >= %v", took, 2*delay)
			}
		}
		if xid, _ := parseReplyXid(frame); xid != int32(i) {
			t.Fatalf("packet %d came back as %d: out of order", i, xid)
		}
	}
	// One at a time, the burst would take 40 delays.
	if took := time.Since(start); took > burst*delay {
		t.Fatalf("a burst of %d took %v: packets in flight do not overlap", burst, took)
	}
	if got := p.Traffic(); got.Requests != burst || got.RoundTrips != 1 {
		t.Fatalf("after a burst of %d: %+v, want %d requests in 1 round trip", burst, got, burst)
	}
	if r, n := p.Pending(); r != 0 || n != 0 {
		t.Fatalf("Pending = %d, %d after every reply came back", r, n)
	}

	// One at a time, each request is a round trip of its own.
	for i := range 3 {
		if _, err := c.Write(echoFrame(100 + i)); err != nil {
			t.Fatal(err)
		}
		if _, err := readFrame(c); err != nil {
			t.Fatal(err)
		}
	}
	if got := p.Traffic().RoundTrips; got != 1+3 {
		t.Fatalf("RoundTrips = %d after 3 more requests one at a time, want 4", got)
	}
}

// With ZooKeeper: requests sent while an earlier one is unanswered share its
// round trip, requests sent one after the other do not, syncs count for
// neither, and Counter sees what it matches.
func TestProxyCountsRoundTrips(t *testing.T) {
	t.Parallel()
	_, root := rootT(t)
	p := ProxyT(t)
	creates := p.Counter(func(op int32, path string) bool {
		return (op == OpCreate || op == OpCreate2) && path == root+"/n"
	})
	conn, _ := ConnectSession(t, zktest.Servers(t), DefaultSessionTimeout, zk.WithDialer(p.Dialer))

	before := p.Traffic()
	for range 3 {
		if _, _, err := conn.Exists(root); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Sync(root); err != nil {
		t.Fatal(err)
	}
	if got := p.Traffic().Sub(before); got != (Traffic{Requests: 3, RoundTrips: 3}) {
		t.Fatalf("after 3 exists one at a time and a sync: %+v", got)
	}

	// Hold the replies so that three requests are surely in flight at once.
	before = p.Traffic()
	p.StallDown()
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			if _, _, err := conn.Exists(root); err != nil {
				t.Error(err)
			}
		})
	}
	waitFor(t, "3 requests in flight", func() bool { r, _ := p.Pending(); return r == 3 })
	p.Restore()
	wg.Wait()
	if got := p.Traffic().Sub(before); got != (Traffic{Requests: 3, RoundTrips: 1}) {
		t.Fatalf("after 3 exists in flight together: %+v", got)
	}
	if r, n := p.Pending(); r != 0 || n != 0 {
		t.Fatalf("Pending = %d, %d after every reply came back", r, n)
	}

	if _, err := conn.Create(root+"/n", nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Create(root+"/other", nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	if n := creates(); n != 1 {
		t.Fatalf("Counter counted %d creates of %s/n, want 1", n, root)
	}
	for _, n := range []string{"/n", "/other"} {
		if err := conn.Delete(root+n, -1); err != nil {
			t.Fatal(err)
		}
	}
}

// A notification on its way through a delaying proxy is pending until the
// client has it.
func TestProxyPendingNotification(t *testing.T) {
	t.Parallel()
	const delay = 300 * time.Millisecond
	direct, root := rootT(t)
	p := ProxyT(t)
	p.SetDelay(delay)
	conn, _ := ConnectSession(t, zktest.Servers(t), DefaultSessionTimeout, zk.WithDialer(p.Dialer))
	_, _, ev, err := conn.ExistsW(root + "/n")
	if err != nil {
		t.Fatal(err)
	}
	before := p.Traffic()
	if _, err := direct.Create(root+"/n", nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	// Counted as it enters the proxy, delivered delay later.
	waitFor(t, "the notification to reach the proxy", func() bool { return p.Traffic().Sub(before).WatchEvents == 1 })
	if r, n := p.Pending(); r != 0 || n != 1 {
		t.Fatalf("Pending = %d, %d with a notification in flight, want 0, 1", r, n)
	}
	<-ev
	if r, n := p.Pending(); r != 0 || n != 0 {
		t.Fatalf("Pending = %d, %d once the client has the notification", r, n)
	}
	if err := direct.Delete(root+"/n", -1); err != nil {
		t.Fatal(err)
	}
}
