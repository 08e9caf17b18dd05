package zktest

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

var acl = zk.WorldACL(zk.PermAll)

func TestSharedServerCreateGet(t *testing.T) {
	conn := Connect(t, ServersT(t))
	root := Root(t, conn)
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
	if got := Tree(t, conn, root); len(got) != 1 || got[0] != p {
		t.Fatalf("Tree = %v, want [%s]", got, p)
	}
	if err := conn.Delete(p, -1); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if got := Tree(t, conn, root); len(got) != 0 {
		t.Fatalf("Tree after delete = %v", got)
	}
}

func TestServerRestartKeepsDataAndSession(t *testing.T) {
	s := StartT(t)
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
