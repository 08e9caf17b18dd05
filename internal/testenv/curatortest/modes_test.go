package curatortest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/testenv/curatortest/eventlog"
	"github.com/zkrecipes/recipes/zktest"
)

// modeEnv is what a test of one CuratorPeer mode needs.
type modeEnv struct {
	peer    *Peer
	servers string
	admin   *zk.Conn
	root    string
	log     string
	ctx     context.Context
}

func newModeEnv(t *testing.T) *modeEnv {
	t.Helper()
	t.Parallel()
	p := EnsureT(t)
	servers := zktest.Servers(t)
	admin := zktest.Connect(t, servers)
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	t.Cleanup(cancel)
	return &modeEnv{
		peer:    p,
		servers: ServersArg(servers),
		admin:   admin,
		root:    zktest.Root(t, admin),
		log:     filepath.Join(t.TempDir(), "events"),
		ctx:     ctx,
	}
}

// runAll runs one CuratorPeer per argument list, all at once, and returns
// their outputs once all have exited, failing t if any failed.
func (e *modeEnv) runAll(t *testing.T, runs ...[]string) []string {
	t.Helper()
	outs := make([]string, len(runs))
	errs := make([]error, len(runs))
	var wg sync.WaitGroup
	for i, args := range runs {
		wg.Go(func() { outs[i], errs[i] = e.peer.Run(e.ctx, args...) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return outs
}

// check replays the log and fails t unless it is clean and each kind in
// entries was entered that many times.
func (e *modeEnv) check(t *testing.T, entries map[string]int, limits map[string]int, exclusive ...string) eventlog.Stats {
	t.Helper()
	events, err := eventlog.Read(e.log)
	if err != nil {
		t.Fatal(err)
	}
	stats, err := eventlog.Check(events, limits, exclusive...)
	if err != nil {
		t.Fatal(err)
	}
	for kind, n := range entries {
		if s := stats[kind]; s.Entries != n || s.Active != 0 {
			t.Errorf("%s: %+v, want %d entries and none active", kind, s, n)
		}
	}
	return stats
}

// lockRun is the argument list of a lock mode: mode SERVERS PATH [extra...]
// ITER HOLD_MS LOG CLIENT.
func (e *modeEnv) lockRun(mode, path string, n int, extra ...string) []string {
	args := append([]string{mode, e.servers, path}, extra...)
	return append(args, "4", "10", e.log, ClientID(n))
}

func TestReadWriteLock(t *testing.T) {
	e := newModeEnv(t)
	path := e.root + "/rw"
	e.runAll(t, e.lockRun("read", path, 0), e.lockRun("read", path, 1), e.lockRun("write", path, 2), e.lockRun("write", path, 3))
	e.check(t, map[string]int{eventlog.KindRead: 8, eventlog.KindWrite: 8},
		map[string]int{eventlog.KindWrite: 1}, eventlog.KindWrite)
}

func TestSemaphore(t *testing.T) {
	e := newModeEnv(t)
	path := e.root + "/sem"
	e.runAll(t, e.lockRun("semaphore", path, 0, "2"), e.lockRun("semaphore", path, 1, "2"), e.lockRun("semaphore", path, 2, "2"))
	e.check(t, map[string]int{eventlog.KindLease: 12}, map[string]int{eventlog.KindLease: 2})
}

func TestSemaphoreMutexAndMultiLock(t *testing.T) {
	e := newModeEnv(t)
	sm, a, b := e.root+"/semaphore-mutex", e.root+"/a", e.root+"/b"
	e.runAll(t, e.lockRun("semaphore-mutex", sm, 0), e.lockRun("semaphore-mutex", sm, 1))
	e.check(t, map[string]int{eventlog.KindMutex: 8}, map[string]int{eventlog.KindMutex: 1})
	e.log += "-multi"
	// Curator's multi-lock takes its locks in the order given: the same
	// order for everyone, or they deadlock.
	e.runAll(t, e.lockRun("multilock", a+","+b, 0), e.lockRun("multilock", a+","+b, 1))
	e.check(t, map[string]int{eventlog.KindMutex: 8}, map[string]int{eventlog.KindMutex: 1})
}

func TestBarrier(t *testing.T) {
	e := newModeEnv(t)
	path := e.root + "/barrier"
	e.runAll(t, []string{"barrier-set", e.servers, path})
	if _, err := e.peer.Run(e.ctx, "barrier-wait", e.servers, path, "100"); ExitCode(err) != 3 {
		t.Fatalf("barrier-wait on a set barrier: %v, want exit status 3", err)
	}
	got := make(chan error, 1)
	go func() {
		out, err := e.peer.Run(e.ctx, "barrier-wait", e.servers, path, "30000")
		if err == nil && out != "passed\n" {
			err = fmt.Errorf("barrier-wait printed %q", out)
		}
		got <- err
	}()
	e.runAll(t, []string{"barrier-remove", e.servers, path})
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}

func TestDoubleBarrier(t *testing.T) {
	const members = 3
	e := newModeEnv(t)
	path := e.root + "/double"
	run := func(n int) []string {
		return []string{"double-barrier", e.servers, path, strconv.Itoa(members), e.log, ClientID(n)}
	}
	got := make(chan error, members-1)
	for n := range members - 1 {
		go func() {
			_, err := e.peer.Run(e.ctx, run(n)...)
			got <- err
		}()
	}
	// With one member missing, those present wait in enter.
	deadline := time.Now().Add(waitLong)
	for {
		names, _, err := e.admin.Children(path)
		if err != nil && err != zk.ErrNoNode {
			t.Fatal(err)
		}
		if len(names) == members-1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("members under %s: %v", path, names)
		}
		time.Sleep(10 * time.Millisecond)
	}
	events, _ := eventlog.Read(e.log)
	if slices.ContainsFunc(events, func(ev eventlog.Event) bool { return ev.Kind == eventlog.KindBarrier }) {
		t.Fatalf("members passed enter with one missing: %v", events)
	}
	e.runAll(t, run(members-1))
	for range members - 1 {
		if err := <-got; err != nil {
			t.Fatal(err)
		}
	}
	e.check(t, map[string]int{eventlog.KindBarrier: members}, nil)
}

func TestBench(t *testing.T) {
	e := newModeEnv(t)
	runs := [][]string{
		{"bench-mutex", e.servers, e.root + "/m", "2", "1"},
		{"bench-rw", e.servers, e.root + "/rw", "2", "1", "80"},
		{"bench-semaphore", e.servers, e.root + "/sem", "2", "3", "1"},
		{"bench-capacity", e.servers, e.root + "/cap", "5", "2", "1"},
	}
	for i, out := range e.runAll(t, runs...) {
		args := runs[i]
		var ops, all int
		var secs float64
		if _, err := fmt.Sscanf(out, "ops=%d seconds=%g all=%d\n", &ops, &secs, &all); err != nil || ops <= 0 || secs < 1 || all < ops {
			t.Errorf("%s printed %q (%v)", args[0], out, err)
		}
		t.Logf("%s: %s", args[0], strings.TrimSpace(out))
	}
}

func TestBenchElection(t *testing.T) {
	e := newModeEnv(t)
	runs := [][]string{
		{"bench-latch-handoff", e.servers, e.root + "/latch", "3"},
		{"bench-selector-handoff", e.servers, e.root + "/selector", "3"},
	}
	for i, out := range e.runAll(t, runs...) {
		ns, ok := strings.CutPrefix(strings.TrimSpace(out), "ns=")
		if !ok || len(strings.Split(ns, ",")) != 3 {
			t.Errorf("%s printed %q, want three times", runs[i][0], out)
		}
		t.Logf("%s: %s", runs[i][0], strings.TrimSpace(out))
	}

	// bench-latch-follow leads once per line read, resigning after each
	// term: else its second campaign would wait behind its first.
	path := e.root + "/follow"
	cmd := e.peer.Command(e.ctx, "bench-latch-follow", e.servers, path, ClientID(1))
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	for range 2 {
		if _, err := io.WriteString(in, "campaign\n"); err != nil {
			t.Fatal(err)
		}
		if !lines.Scan() || lines.Text() != "leader" {
			t.Fatalf("bench-latch-follow printed %q (%v), want \"leader\"", lines.Text(), lines.Err())
		}
	}
	_ = in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("bench-latch-follow: %v", err)
	}
}
