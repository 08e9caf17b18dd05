package main_test

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/locks"
	"github.com/zkrecipes/recipes/zktest"
)

// startQueued starts zkrecipes with args and returns once it says on stderr
// that it waits (a line with waiting), leaving it running.
func startQueued(t *testing.T, waiting string, args ...string) *exec.Cmd {
	t.Helper()
	p := command(t, args...)
	errs, err := p.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, p.Start())
	t.Cleanup(func() { _ = p.Process.Kill() })
	seen := make(chan struct{})
	go func() {
		said := false
		for sc := bufio.NewScanner(errs); sc.Scan(); {
			if !said && strings.Contains(sc.Text(), waiting) {
				close(seen)
				said = true
			}
		}
	}()
	select {
	case <-seen:
	case <-time.After(30 * time.Second):
		t.Fatalf("zkrecipes %s never said %q", strings.Join(args, " "), waiting)
	}
	return p
}

// cversion is the number of changes to path's children so far.
func cversion(t *testing.T, admin *zk.Conn, path string) int32 {
	t.Helper()
	_, st, err := admin.Get(path)
	require.NoError(t, err)
	return st.Cversion
}

// TestCommandLineQueuesInOrder: five waiters started one after another,
// each once it says it waits, get the lock (or lead) in the order they
// started, and each joined the queue with one node, created once: the
// directory's children changed once per waiter. A command line that tried
// first and then queued again would leave the queue between the two, and
// cost two more changes each.
func TestCommandLineQueuesInOrder(t *testing.T) {
	t.Parallel()
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	for _, c := range []struct {
		name    string
		args    func(i int) []string
		waiting string
	}{
		{"lock", func(int) []string { return []string{"lock"} }, "waiting for"},
		{"wlock", func(int) []string { return []string{"wlock"} }, "waiting for"},
		{"semaphore-mutex", func(int) []string { return []string{"semaphore-mutex"} }, "waiting for"},
		{"semaphore", func(int) []string { return []string{"semaphore", "--leases", "1"} }, "waiting for"},
		{"multilock", func(int) []string { return []string{"multilock"} }, "waiting for"},
		{"elect", func(i int) []string { return []string{"elect", "--id", fmt.Sprint("w", i)} }, "waiting for"},
		{"elect-selector", func(i int) []string { return []string{"elect", "--selector", "--id", fmt.Sprint("w", i)} }, "waiting for"},
		// It campaigns again after each term, at the back of the queue.
		{"elect-requeue", func(i int) []string { return []string{"elect", "--requeue", "--id", fmt.Sprint("w", i)} }, "campaigning for"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := root + "/" + c.name
			log := filepath.Join(t.TempDir(), "order")
			target := path
			if c.name == "multilock" {
				target = path + "/a," + path + "/b"
			}
			start := func(i int) []string {
				a := c.args(i)
				return append([]string{a[0], target}, a[1:]...)
			}
			holder := startHolding(t, start(0)...)
			// A semaphore's waiters queue at its gate, a container that
			// may come and go, and a multilock's at its members: their
			// changes are not counted.
			counted := target == path && !strings.HasPrefix(c.name, "semaphore")
			var before int32
			if counted {
				before = cversion(t, admin, path)
			}
			const n = 5
			waiters := make([]*exec.Cmd, n)
			for i := range waiters {
				args := append(start(i+1), "--", "sh", "-c", `echo "$0" >> "$1"`, fmt.Sprint(i+1), log)
				waiters[i] = startQueued(t, c.waiting, args...)
			}
			if counted {
				assert.Equal(t, before+n, cversion(t, admin, path), "one node created per waiter, and none deleted")
			}
			stop(holder)
			if c.name == "elect-requeue" { // it runs until stopped
				eventually(t, func() bool { return len(lines(log)) >= n })
				for _, w := range waiters {
					stop(w)
				}
			} else {
				for i, w := range waiters {
					require.NoError(t, w.Wait(), "waiter %d", i+1)
				}
			}
			assert.Equal(t, []string{"1", "2", "3", "4", "5"}, lines(log)[:n], "the order they held in")
		})
	}
}

// TestWaitingCostsWhatTheLibrarysLockCosts: a zkrecipes lock that waits
// sends the requests a program sends that connects, waits in Lock, releases
// and closes its session: as many in all with -q, and as many writes
// without, when it reads who holds the lock to say so.
func TestWaitingCostsWhatTheLibrarysLockCosts(t *testing.T) {
	t.Parallel()
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/lock"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	holder, err := recipes.Connect(ctx, zktest.Servers(t))
	require.NoError(t, err)
	defer holder.Close()
	m, err := locks.NewMutex(holder, path)
	require.NoError(t, err)
	// contended runs wait while the holder holds the lock, once it waits
	// in line (its node is there, and its watches of the node ahead and of
	// its own, reads, are answered: before that, a release could let it
	// hold at its listing) lets go, and returns what went through a proxy
	// of its own.
	contended := func(wait func(servers string) (done func() error)) (requests, writes int64) {
		p := testenv.ProxyT(t)
		written := p.Counter(func(op int32, _ string) bool { return writeOps[op] })
		watched := p.Counter(func(op int32, _ string) bool { return op == opExists || op == opGetData })
		held, err := m.Lock(ctx)
		require.NoError(t, err)
		done := wait(p.Addr())
		waitNodes(t, admin, path, 2)
		eventually(t, func() bool {
			pending, _ := p.Pending()
			return watched() >= 2 && pending == 0
		})
		require.NoError(t, held.Release(ctx))
		require.NoError(t, done())
		return p.Traffic().Requests, written()
	}
	library := func(servers string) func() error {
		got := make(chan error, 1)
		go func() {
			sess, err := recipes.Connect(ctx, []string{servers})
			if err != nil {
				got <- err
				return
			}
			m, err := locks.NewMutex(sess, path)
			if err == nil {
				var h *locks.Hold
				if h, err = m.Lock(ctx); err == nil {
					err = h.Release(ctx)
				}
			}
			sess.Close()
			got <- err
		}()
		return func() error { return <-got }
	}
	cli := func(quiet ...string) func(servers string) func() error {
		return func(servers string) func() error {
			args := append(append([]string{"--servers", servers, "lock", path}, quiet...), "--", "true")
			p := exec.Command(binary, args...)
			require.NoError(t, p.Start())
			return p.Wait
		}
	}
	libRequests, libWrites := contended(library)
	quietRequests, quietWrites := contended(cli("-q"))
	requests, writes := contended(cli())
	t.Logf("requests (writes) of a contended acquisition, with connect, release and close: library %d (%d), zkrecipes lock -q %d (%d), zkrecipes lock %d (%d)",
		libRequests, libWrites, quietRequests, quietWrites, requests, writes)
	assert.Equal(t, libRequests, quietRequests, "zkrecipes lock -q: requests")
	assert.Equal(t, libWrites, quietWrites, "zkrecipes lock -q: writes")
	assert.Equal(t, libWrites, writes, "zkrecipes lock: writes")
}

// The opcodes of exists and getData, the reads that set a waiter's watches.
const (
	opExists  = 3
	opGetData = 4
)

// writeOps are the opcodes of the requests that write: create, delete,
// setData, multi, create2, createContainer, createTTL.
var writeOps = map[int32]bool{1: true, 2: true, 5: true, 14: true, 15: true, 19: true, 21: true}
