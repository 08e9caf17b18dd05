package zktest

import (
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/zkserver"
)

// waitState reads events until one has the given state, failing t if none
// comes within the bound.
func waitState(t *testing.T, events <-chan zk.Event, want zk.State) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case ev := <-events:
			if ev.State == want {
				return
			}
		case <-deadline:
			t.Fatalf("no %v event within a minute", want)
		}
	}
}

// events connects to servers with the session timeout given and returns the
// connection with a channel of every event it has, kept from the start.
func events(t *testing.T, servers []string, timeout time.Duration) (*zk.Conn, <-chan zk.Event) {
	t.Helper()
	ch := make(chan zk.Event, 1024)
	conn := ConnectWithTimeout(t, servers, timeout, zk.WithEventCallback(func(ev zk.Event) {
		select {
		case ch <- ev:
		default:
		}
	}))
	return conn, ch
}

// waitExists polls the server until path exists, or does not, as want
// says, for up to a minute.
func waitExists(t *testing.T, conn *zk.Conn, path string, want bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ok, _, err := conn.Exists(path)
		if err != nil {
			t.Fatal(err)
		}
		if ok == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: exists is still %v after a minute", path, ok)
		}
		time.Sleep(20 * time.Millisecond) // polling the server's state
	}
}

// TestExpireSession: once ExpireSession returns, the session's ephemeral
// node is gone, and the client hears that its session expired.
func TestExpireSession(t *testing.T) {
	t.Parallel()
	srv := Start(t)
	admin := Connect(t, srv.Servers())
	root := Root(t, admin)
	if _, err := admin.CreateContainer(root, nil, zk.FlagContainer, acl); err != nil {
		t.Fatal(err)
	}
	conn, ev := events(t, srv.Servers(), SessionTimeout)
	if _, err := conn.Create(root+"/eph", nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	id := conn.SessionID()
	ExpireSession(t, id)
	if ok, _, err := admin.Exists(root + "/eph"); err != nil || ok {
		t.Fatalf("the expired session's node: exists %v, %v", ok, err)
	}
	waitState(t, ev, zk.StateExpired)
	// Expiring it again does nothing.
	ExpireSession(t, id)
}

// TestExpireSessionThroughAProxyOnAnEnsemble: a session that reaches an
// ensemble member through a Proxy is expired too, even while the Proxy
// cuts it off.
func TestExpireSessionThroughAProxyOnAnEnsemble(t *testing.T) {
	t.Parallel()
	e := StartEnsemble(t, 3)
	admin := Connect(t, e.Servers())
	root := Root(t, admin)
	if _, err := admin.CreateContainer(root, nil, zk.FlagContainer, acl); err != nil {
		t.Fatal(err)
	}
	p := NewProxy(t, e.Addr(1))
	conn, ev := events(t, p.Servers(), SessionTimeout)
	if _, err := conn.Create(root+"/eph", nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	if m, ok := e.MemberOf(conn.SessionID()); !ok || m != 1 {
		t.Fatalf("MemberOf = %d, %v; want 1", m, ok)
	}
	p.Cut()
	ExpireSession(t, conn.SessionID())
	if _, err := admin.Sync(root); err != nil { // the member admin reads from has applied the close
		t.Fatal(err)
	}
	if ok, _, err := admin.Exists(root + "/eph"); err != nil || ok {
		t.Fatalf("the expired session's node: exists %v, %v", ok, err)
	}
	p.Heal()
	waitState(t, ev, zk.StateExpired)
}

// TestExpireSessionUnknown: a session the kit never saw fails the test with
// a message, rather than passing without expiring anything.
func TestExpireSessionUnknown(t *testing.T) {
	t.Parallel()
	for _, id := range []int64{0, 0x1234} {
		if err := expire(id); err == nil {
			t.Errorf("expire(0x%x) succeeded", id)
		}
	}
}

// TestProxyCut: while cut, nothing reaches the server, so it expires the
// session; healed, the client hears so.
func TestProxyCut(t *testing.T) {
	t.Parallel()
	admin := Connect(t, Servers(t))
	root := Root(t, admin)
	if _, err := admin.CreateContainer(root, nil, zk.FlagContainer, acl); err != nil {
		t.Fatal(err)
	}
	p := NewProxy(t, Servers(t)...)
	conn, ev := events(t, p.Servers(), time.Second)
	if _, err := conn.Create(root+"/eph", nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	p.Cut()
	waitExists(t, admin, root+"/eph", false)
	p.Heal()
	waitState(t, ev, zk.StateExpired)
}

// TestProxyDrop: a dropped connection comes back with its session.
func TestProxyDrop(t *testing.T) {
	t.Parallel()
	p := NewProxy(t, Servers(t)...)
	conn, ev := events(t, p.Servers(), SessionTimeout)
	id := conn.SessionID()
	p.Drop()
	waitState(t, ev, zk.StateDisconnected)
	waitState(t, ev, zk.StateHasSession)
	if got := conn.SessionID(); got != id {
		t.Fatalf("session 0x%x became 0x%x", id, got)
	}
}

// TestServerStopAndRestart: through the kit's address, a stopped server
// refuses at once, and a restarted one keeps the session and its data.
func TestServerStopAndRestart(t *testing.T) {
	t.Parallel()
	srv := Start(t)
	conn, ev := events(t, srv.Servers(), SessionTimeout)
	id := conn.SessionID()
	if _, err := conn.Create("/eph", nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	waitState(t, ev, zk.StateDisconnected)
	if out, err := zkserver.FourLetterWord(srv.Addr(), "ruok", time.Second); err == nil && out != "" {
		t.Fatal("a stopped server's address answers")
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	waitState(t, ev, zk.StateHasSession)
	if got := conn.SessionID(); got != id {
		t.Fatalf("session 0x%x became 0x%x", id, got)
	}
	if ok, _, err := conn.Exists("/eph"); err != nil || !ok {
		t.Fatalf("the session's node after the restart: exists %v, %v", ok, err)
	}
	if err := conn.Delete("/eph", -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatal(err)
	}
}

// TestProxyCutReplies: a request goes through, its answer is held until
// Heal.
func TestProxyCutReplies(t *testing.T) {
	t.Parallel()
	admin := Connect(t, Servers(t))
	root := Root(t, admin)
	if _, err := admin.CreateContainer(root, nil, zk.FlagContainer, acl); err != nil {
		t.Fatal(err)
	}
	p := NewProxy(t, Servers(t)...)
	conn, _ := events(t, p.Servers(), SessionTimeout)
	p.CutReplies()
	created := make(chan error, 1)
	go func() {
		_, err := conn.Create(root+"/eph", nil, zk.FlagEphemeral, acl)
		created <- err
	}()
	waitExists(t, admin, root+"/eph", true)
	select {
	case err := <-created:
		t.Fatalf("the create returned (%v) while its answer was held", err)
	default:
	}
	p.Heal()
	if err := <-created; err != nil {
		t.Fatal(err)
	}
	if err := conn.Delete(root+"/eph", -1); err != nil {
		t.Fatal(err)
	}
}

// TestRootExpiresAbandonedSessions: a client cut off by a Proxy closes, and
// its close never reaches the server, which keeps its node until the
// session times out. Root's check expires such a session, as the server
// would, and finds nothing left; without that it would report the node.
func TestRootExpiresAbandonedSessions(t *testing.T) {
	t.Parallel()
	admin := Connect(t, Servers(t))
	root := Root(t, admin)
	if _, err := admin.CreateContainer(root, nil, zk.FlagContainer, acl); err != nil {
		t.Fatal(err)
	}
	var id int64
	t.Cleanup(func() {
		// After the connection's close and the Proxy's, before Root's
		// check: the node is still there, and its session abandoned.
		if ok, _, err := admin.Exists(root + "/eph"); err != nil || !ok {
			t.Errorf("the cut-off session's node before the check: exists %v, %v", ok, err)
		}
		if !sessions.abandoned(id, closeSeen) {
			t.Error("the closed, cut-off session is not taken as abandoned")
		}
	})
	p := NewProxy(t, Servers(t)...)
	conn := ConnectWithTimeout(t, p.Servers(), 30*time.Second) // the server would keep it past the test
	if _, err := conn.Create(root+"/eph", nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	id = conn.SessionID()
	p.Cut()
}
