package testenv

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/zkserver"
	"github.com/zkrecipes/recipes/zktest"
)

var acl = zk.WorldACL(zk.PermAll)

func TestSharedServerCreateGet(t *testing.T) {
	conn := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, conn)
	if _, err := conn.CreateContainer(root, nil, zk.FlagContainer, acl); err != nil {
		t.Fatalf("create root: %v", err)
	}
	p := root + "/node"
	if _, err := conn.Create(p, []byte("hello"), 0, acl); err != nil {
		t.Fatalf("create: %v", err)
	}
	data, st, err := conn.Get(p)
	if err != nil || string(data) != "hello" || st.EphemeralOwner != 0 {
		t.Fatalf("get = %q, %+v, %v", data, st, err)
	}
	if got := zktest.Tree(t, conn, root); len(got) != 1 || got[0] != p {
		t.Fatalf("Tree = %v, want [%s]", got, p)
	}
	if err := conn.Delete(p, -1); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if got := zktest.Tree(t, conn, root); len(got) != 0 {
		t.Fatalf("Tree after delete = %v", got)
	}
}

func TestServerRestartKeepsDataAndSession(t *testing.T) {
	s := startServer(t)
	if got := s.Servers(); len(got) != 1 || got[0] != s.Addr() || !strings.HasPrefix(s.Addr(), "127.0.0.1:") {
		t.Fatalf("Servers() = %v, Addr() = %s", got, s.Addr())
	}
	conn, events := ConnectSession(t, s.Servers(), DefaultSessionTimeout)
	sid := conn.SessionID()
	if _, err := conn.Create("/kept", []byte("v"), 0, acl); err != nil {
		t.Fatalf("create: %v", err)
	}
	pid := s.PID()
	if err := s.Restart(); err != nil {
		t.Fatalf("restart: %v", err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("old server process %d still exists after Restart (kill 0: %v)", pid, err)
	}
	events.WaitStateT(t, zk.StateDisconnected, DefaultSessionTimeout)
	events.WaitStateT(t, zk.StateHasSession, DefaultSessionTimeout)
	if got := conn.SessionID(); got != sid {
		t.Fatalf("session changed across restart: %x -> %x", sid, got)
	}
	if data, _, err := conn.Get("/kept"); err != nil || string(data) != "v" {
		t.Fatalf("get after restart = %q, %v", data, err)
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if _, err := FourLetterWord(s.Addr(), "ruok", time.Second); err == nil {
		t.Fatalf("server still answers after Stop")
	}
}

func TestStartFailureReportsLog(t *testing.T) {
	_, err := Start(WithConfig("tickTime", "not-a-number"))
	if err == nil {
		t.Fatal("Start with a broken config succeeded")
	}
	if !strings.Contains(err.Error(), "not-a-number") {
		t.Fatalf("error does not include the server log: %v", err)
	}
}

// startServer starts a standalone server with zkserver, which these tests
// test, closed when t ends: its address is the server's own.
func startServer(t *testing.T, opts ...Option) *Server {
	t.Helper()
	s, err := Start(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// startEnsemble is startServer for an ensemble of n.
func startEnsemble(t *testing.T, n int, opts ...Option) *zkserver.Ensemble {
	t.Helper()
	e, err := zkserver.StartEnsemble(n, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the ensemble after the failure:\n%s", e.Report(60))
		}
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	})
	return e
}
