package testenv

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/zktest"
)

func TestEnsembleSurvivesLosingLeader(t *testing.T) {
	t.Parallel()
	e := startEnsemble(t, 3)
	if got := e.Servers(); len(got) != 3 {
		t.Fatalf("Servers() = %v", got)
	}
	conn := zktest.Connect(t, e.Servers())
	if _, err := conn.Create("/quorum", []byte("1"), 0, acl); err != nil {
		t.Fatalf("create: %v", err)
	}
	leader := e.Leader()
	if leader < 0 {
		t.Fatal("no leader")
	}
	if err := e.Stop(leader); err != nil {
		t.Fatalf("stop leader: %v", err)
	}
	if err := e.WaitQuorum(); err != nil {
		t.Fatalf("quorum after losing the leader: %v", err)
	}
	if l := e.Leader(); l < 0 || l == leader {
		t.Fatalf("leader after stop = %d (stopped %d)", l, leader)
	}
	// The old connection recovers; a new one works too.
	if _, err := conn.Set("/quorum", []byte("2"), -1); err != nil {
		// The client may have been connected to the stopped server;
		// one retry covers the in-flight connection loss.
		if _, err = conn.Set("/quorum", []byte("2"), -1); err != nil {
			t.Fatalf("set after losing the leader: %v", err)
		}
	}
	conn2 := zktest.Connect(t, e.Servers())
	if data, _, err := conn2.Get("/quorum"); err != nil || string(data) != "2" {
		t.Fatalf("get = %q, %v", data, err)
	}
	if err := e.Start(leader); err != nil {
		t.Fatalf("restart old leader: %v", err)
	}
	if mode := answeredMode(t, e, leader); mode != "follower" {
		t.Fatalf("restarted member mode = %q", mode)
	}
	if _, err := conn2.Sync("/quorum"); err != nil && err != zk.ErrNoNode {
		t.Fatalf("sync: %v", err)
	}

	// A member that dies without Stop shows in the report with its exit.
	if r := e.Report(5); strings.Count(r, ") running; log ") != 3 {
		t.Fatalf("Report before the kill:\n%s", r)
	}
	victim := (leader + 1) % e.Len()
	if err := syscall.Kill(e.PID(victim), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("--- server %d (%s) exited on its own (signal: killed); log ", victim+1, e.Addr(victim))
	waitFor(t, "the report to show the killed member", func() bool {
		return strings.Contains(e.Report(5), want)
	})
	if err := e.Stop(victim); err != nil {
		t.Fatal(err)
	}
	if r := e.Report(5); !strings.Contains(r, fmt.Sprintf("--- server %d (%s) stopped; log ", victim+1, e.Addr(victim))) {
		t.Fatalf("Report after Stop:\n%s", r)
	}
}
