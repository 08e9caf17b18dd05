package testenv

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/zktest"
)

// rootT returns a test root created as a container through a direct
// connection, which stays usable while the proxy misbehaves.
func rootT(t *testing.T) (*zk.Conn, string) {
	t.Helper()
	direct := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, direct)
	if _, err := direct.CreateContainer(root, nil, zk.FlagContainer, acl); err != nil {
		t.Fatalf("create root: %v", err)
	}
	return direct, root
}

func TestProxyCutRestoreKeepsSession(t *testing.T) {
	t.Parallel()
	_, root := rootT(t)
	p := ProxyT(t)
	// The server list names the real server: the proxy's dialer must
	// ignore it and go through the proxy anyway.
	conn, events := ConnectSession(t, zktest.Servers(t), DefaultSessionTimeout, zk.WithDialer(p.Dialer))
	sid := conn.SessionID()

	p.Cut()
	events.WaitStateT(t, zk.StateDisconnected, 5*time.Second)
	if _, _, err := conn.Exists(root); err == nil {
		t.Fatalf("request succeeded through a cut proxy")
	}
	p.Restore()
	events.WaitStateT(t, zk.StateHasSession, 10*time.Second)
	if got := conn.SessionID(); got != sid {
		t.Fatalf("session changed: %x -> %x", sid, got)
	}
	if ok, _, err := conn.Exists(root); err != nil || !ok {
		t.Fatalf("exists after restore = %v, %v", ok, err)
	}
}

func TestProxyStallHoldsBytes(t *testing.T) {
	t.Parallel()
	direct, root := rootT(t)
	p := ProxyT(t)
	held := make(chan struct{}, 16)
	p.mu.Lock()
	p.onHold = func() {
		select {
		case held <- struct{}{}:
		default:
		}
	}
	p.mu.Unlock()
	// A long session: the stall must end well before the client's read
	// timeout, so the connection survives it.
	conn, events := ConnectSession(t, zktest.Servers(t), 30*time.Second, zk.WithDialer(p.Dialer))

	p.Stall()
	node := root + "/held"
	done := make(chan error, 1)
	go func() {
		_, err := conn.Create(node, nil, 0, acl)
		done <- err
	}()
	select {
	case <-held:
	case <-time.After(5 * time.Second):
		t.Fatal("proxy never held a packet")
	}
	if ok, _, err := direct.Exists(node); err != nil || ok {
		t.Fatalf("node visible while stalled: %v, %v", ok, err)
	}
	p.Restore()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("create after restore: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("create did not complete after restore")
	}
	for _, ev := range events.All() {
		if ev.Type == zk.EventSession && ev.State == zk.StateDisconnected {
			t.Fatalf("connection dropped during a short stall: %+v", events.All())
		}
	}
	if err := conn.Delete(node, -1); err != nil {
		t.Fatalf("delete: %v", err)
	}
}

func TestProxyLongStallDisconnectsThenResumes(t *testing.T) {
	t.Parallel()
	_, root := rootT(t)
	p := ProxyT(t)
	// Read timeout is 2/3 of the session timeout; the client also waits
	// 1s before redialing a single server, so leave room before expiry.
	conn, events := ConnectSession(t, zktest.Servers(t), 6*time.Second, zk.WithDialer(p.Dialer))
	sid := conn.SessionID()

	p.Stall()
	events.WaitStateT(t, zk.StateDisconnected, 10*time.Second)
	p.Restore()
	events.WaitStateT(t, zk.StateHasSession, 10*time.Second)
	if got := conn.SessionID(); got != sid {
		t.Fatalf("session changed: %x -> %x", sid, got)
	}
	if ok, _, err := conn.Exists(root); err != nil || !ok {
		t.Fatalf("exists after restore = %v, %v", ok, err)
	}
}

func TestProxyDropReply(t *testing.T) {
	t.Parallel()
	direct, root := rootT(t)
	p := ProxyT(t)
	conn, events := ConnectSession(t, zktest.Servers(t), DefaultSessionTimeout, zk.WithDialer(p.Dialer))
	sid := conn.SessionID()

	node := root + "/dropped"
	dropped := p.DropReply(func(op int32, path string) bool {
		return (op == OpCreate || op == OpCreate2) && path == node
	})
	if p.Dropped() != dropped {
		t.Fatal("Dropped() does not return the armed rule's channel")
	}
	// A request that does not match passes through.
	if _, _, err := conn.Exists(root); err != nil {
		t.Fatalf("exists: %v", err)
	}
	_, err := conn.Create(node, []byte("x"), 0, acl)
	if !errors.Is(err, zk.ErrConnectionClosed) {
		t.Fatalf("create error = %v, want %v", err, zk.ErrConnectionClosed)
	}
	select {
	case <-dropped:
	case <-time.After(5 * time.Second):
		t.Fatal("drop not reported")
	}
	if ok, _, err := direct.Exists(node); err != nil || !ok {
		t.Fatalf("server did not apply the create: %v, %v", ok, err)
	}
	events.WaitStateT(t, zk.StateDisconnected, 5*time.Second)
	events.WaitStateT(t, zk.StateHasSession, 10*time.Second)
	if got := conn.SessionID(); got != sid {
		t.Fatalf("session changed: %x -> %x", sid, got)
	}
	// The rule is one-shot: the same request now gets its reply.
	if _, err := conn.Create(node, nil, 0, acl); !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("second create error = %v, want %v", err, zk.ErrNodeExists)
	}
	if err := conn.Delete(node, -1); err != nil {
		t.Fatalf("delete: %v", err)
	}
}

func TestParseRequest(t *testing.T) {
	frame := []byte{0, 0, 0, 0, // length, unused by the parser
		0, 0, 0, 7, // xid
		0, 0, 0, 14, // multi
		0, 0, 0, 1, 0, 0xff, 0xff, 0xff, 0xff, // header: create, not done, err -1
		0, 0, 0, 2, '/', 'a', // path
	}
	xid, op, path, ok := parseRequest(frame)
	if !ok || xid != 7 || op != OpMulti || path != "/a" {
		t.Fatalf("parseRequest = %d %d %q %v", xid, op, path, ok)
	}
	frame = slices.Concat([]byte{0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 2, 0, 0, 0, 3}, []byte("/bc"))
	if xid, op, path, ok = parseRequest(frame); !ok || xid != 9 || op != OpDelete || path != "/bc" {
		t.Fatalf("parseRequest = %d %d %q %v", xid, op, path, ok)
	}
}

// TestProxyCountsTraffic: requests are counted when forwarded, pings and
// syncs are not, a notification is counted by the time the client has it,
// and nothing is pending once the client has it all.
func TestProxyCountsTraffic(t *testing.T) {
	t.Parallel()
	direct, root := rootT(t)
	p := ProxyT(t)
	conn, _ := ConnectSession(t, zktest.Servers(t), DefaultSessionTimeout, zk.WithDialer(p.Dialer))
	before := p.Traffic()
	if _, err := conn.Sync(root); err != nil {
		t.Fatal(err)
	}
	_, _, ev, err := conn.ExistsW(root + "/n")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := direct.Create(root+"/n", nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	<-ev
	if got := p.Traffic().Sub(before); got != (Traffic{Requests: 1, RoundTrips: 1, WatchEvents: 1}) {
		t.Fatalf("after a sync, an exists and its notification: %+v", got)
	}
	if r, n := p.Pending(); r != 0 || n != 0 {
		t.Fatalf("Pending = %d, %d once the client has every reply and notification", r, n)
	}
	if err := direct.Delete(root+"/n", -1); err != nil {
		t.Fatal(err)
	}
}
