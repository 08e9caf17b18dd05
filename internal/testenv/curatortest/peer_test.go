package curatortest

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkrecipes/recipes/internal/testenv/curatortest/eventlog"
	"github.com/zkrecipes/recipes/zktest"
)

// waitLong bounds each Java run in these tests.
const waitLong = 60 * time.Second

func TestVersion(t *testing.T) {
	start := time.Now()
	p := EnsureT(t)
	t.Logf("Ensure took %v (class path %s)", time.Since(start), p.ClassPath())
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	start = time.Now()
	out, err := p.Run(ctx, "version")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("CuratorPeer version: %s in %v", strings.TrimSpace(out), time.Since(start))
	if !strings.HasPrefix(out, "curator=5.") {
		t.Fatalf("version = %q, want Curator 5.x", out)
	}
}

func TestBadArguments(t *testing.T) {
	p := EnsureT(t)
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	for _, args := range [][]string{nil, {"no-such-mode"}, {"mutex", "127.0.0.1:1"}, {"revoke", "a", "b", "c"}} {
		_, err := p.Run(ctx, args...)
		if ExitCode(err) != 2 || !strings.Contains(err.Error(), "usage:") {
			t.Errorf("Run(%q) = %v, want exit status 2 with the usage", args, err)
		}
	}
}

// TestMutex runs two Java processes contending for one InterProcessMutex and
// checks their event log for exclusion.
func TestMutex(t *testing.T) {
	const procs, iterations = 2, 5
	p := EnsureT(t)
	servers := zktest.Servers(t)
	admin := zktest.Connect(t, servers)
	root := zktest.Root(t, admin)
	path := root + "/lock"
	log := filepath.Join(t.TempDir(), "events")
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()

	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, procs)
	for i := range procs {
		wg.Go(func() {
			_, errs[i] = p.Run(ctx, "mutex", ServersArg(servers), path,
				strconv.Itoa(iterations), "20", log, ClientID(i))
		})
	}
	wg.Wait()
	t.Logf("%d processes x %d iterations in %v", procs, iterations, time.Since(start))
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	events, err := eventlog.Read(log)
	if err != nil {
		t.Fatal(err)
	}
	stats, err := eventlog.Check(events, map[string]int{eventlog.KindMutex: 1})
	if err != nil {
		t.Fatal(err)
	}
	if s := stats[eventlog.KindMutex]; s.Entries != procs*iterations || s.MaxActive != 1 || s.Active != 0 {
		t.Fatalf("mutex stats = %+v, want %d entries", s, procs*iterations)
	}

	// The processes closed their clients, so their nodes are gone already;
	// only the containers remain, and the server reaps them.
	orphans, err := zktest.Leftovers(admin, root)
	if err != nil || len(orphans) > 0 {
		t.Fatalf("left under %s: %v (%v)", root, orphans, err)
	}
	deadline := time.Now().Add(waitLong) // the reaper runs every 100ms, one level at a time
	for {
		ok, _, err := admin.Exists(root)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still exists: %v", root, zktest.Tree(t, admin, root))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
