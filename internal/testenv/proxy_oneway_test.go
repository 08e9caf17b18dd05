package testenv

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/zktest"
)

// holdSignal returns a channel that receives when p holds a packet.
func holdSignal(t *testing.T, p *Proxy) <-chan struct{} {
	t.Helper()
	held := make(chan struct{}, 16)
	p.mu.Lock()
	p.onHold = func() {
		select {
		case held <- struct{}{}:
		default:
		}
	}
	p.mu.Unlock()
	return held
}

func waitOrFatal[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// With client-to-server traffic held, the server's notifications still
// reach the client, and the client's requests reach the server only after
// Restore.
func TestProxyStallUpLetsNotificationsThrough(t *testing.T) {
	t.Parallel()
	direct, root := rootT(t)
	p := ProxyT(t)
	held := holdSignal(t, p)
	// A long session: pings go unanswered during the stall.
	conn, events := ConnectSession(t, zktest.Servers(t), 30*time.Second, zk.WithDialer(p.Dialer))

	watched := root + "/watched"
	if _, err := direct.Create(watched, []byte("1"), 0, acl); err != nil {
		t.Fatalf("create: %v", err)
	}
	_, _, watch, err := conn.GetW(watched)
	if err != nil {
		t.Fatalf("getw: %v", err)
	}

	p.StallUp()
	node := root + "/held"
	done := make(chan error, 1)
	go func() {
		_, err := conn.Create(node, nil, 0, acl)
		done <- err
	}()
	waitOrFatal(t, held, "the request to be held")

	if _, err := direct.Set(watched, []byte("2"), -1); err != nil {
		t.Fatalf("set: %v", err)
	}
	if ev := waitOrFatal(t, watch, "the notification"); ev.Type != zk.EventNodeDataChanged || ev.Path != watched {
		t.Fatalf("notification = %+v", ev)
	}
	// The request is held at the proxy: the server has not seen it.
	if ok, _, err := direct.Exists(node); err != nil || ok {
		t.Fatalf("held create visible: %v, %v", ok, err)
	}
	select {
	case err := <-done:
		t.Fatalf("create returned during StallUp: %v", err)
	default:
	}

	p.Restore()
	if err := waitOrFatal(t, done, "the create after Restore"); err != nil {
		t.Fatalf("create after restore: %v", err)
	}
	for _, ev := range events.All() {
		if ev.Type == zk.EventSession && ev.State == zk.StateDisconnected {
			t.Fatalf("connection dropped during a short stall: %+v", events.All())
		}
	}
	for _, n := range []string{node, watched} {
		if err := direct.Delete(n, -1); err != nil {
			t.Fatalf("delete %s: %v", n, err)
		}
	}
}

// With server-to-client traffic held, the server applies the client's
// requests but the client gets no reply and no notification until Restore.
func TestProxyStallDownHoldsReplies(t *testing.T) {
	t.Parallel()
	direct, root := rootT(t)
	p := ProxyT(t)
	held := holdSignal(t, p)
	conn, _ := ConnectSession(t, zktest.Servers(t), 30*time.Second, zk.WithDialer(p.Dialer))

	watched := root + "/watched"
	if _, err := direct.Create(watched, []byte("1"), 0, acl); err != nil {
		t.Fatalf("create: %v", err)
	}
	_, _, watch, err := conn.GetW(watched)
	if err != nil {
		t.Fatalf("getw: %v", err)
	}
	node := root + "/applied"
	_, _, created, err := direct.ExistsW(node)
	if err != nil {
		t.Fatalf("existsw: %v", err)
	}

	p.StallDown()
	done := make(chan error, 1)
	go func() {
		_, err := conn.Create(node, nil, 0, acl)
		done <- err
	}()
	// The server applies the create; its reply is then held.
	if ev := waitOrFatal(t, created, "the create to be applied"); ev.Type != zk.EventNodeCreated {
		t.Fatalf("event = %+v", ev)
	}
	waitOrFatal(t, held, "the reply to be held")
	if _, err := direct.Set(watched, []byte("2"), -1); err != nil {
		t.Fatalf("set: %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("create returned during StallDown: %v", err)
	case ev := <-watch:
		t.Fatalf("notification delivered during StallDown: %+v", ev)
	default:
	}

	p.Restore()
	if err := waitOrFatal(t, done, "the create after Restore"); err != nil {
		t.Fatalf("create after restore: %v", err)
	}
	if ev := waitOrFatal(t, watch, "the notification"); ev.Type != zk.EventNodeDataChanged {
		t.Fatalf("notification = %+v", ev)
	}
	for _, n := range []string{node, watched} {
		if err := direct.Delete(n, -1); err != nil {
			t.Fatalf("delete %s: %v", n, err)
		}
	}
}

// A connection made while a direction is held gets no session until
// Restore.
func TestProxyStallUpHoldsNewSession(t *testing.T) {
	t.Parallel()
	p := ProxyT(t)
	held := holdSignal(t, p)
	p.StallUp()
	events := newEventLog()
	conn, ch, err := zk.Connect(zktest.Servers(t), 30*time.Second, zk.WithDialer(p.Dialer),
		zk.WithEventCallback(events.record), zk.WithLogger(quietLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		for range ch {
		}
	})
	waitOrFatal(t, held, "the connect request to be held")
	if conn.SessionID() != 0 {
		t.Fatalf("session %x during StallUp", conn.SessionID())
	}
	p.Restore()
	events.WaitStateT(t, zk.StateHasSession, 10*time.Second)
}

// quietLogger drops go-zookeeper's log lines.
type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}
