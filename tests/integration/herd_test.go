package integration_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/zktest"
)

// herd is a set of waiters, one session each, queued behind a holder. It
// releases them in turn and counts, after each release, the waiting
// sessions other than the new holder that did anything (sent a request).
type herd struct {
	t        *testing.T
	sessions []*recipes.Session
	proxies  []*testenv.Proxy // proxies[i] counts sessions[i]'s traffic
	drops    []*atomic.Int32  // drops[i] counts sessions[i]'s suspensions
	acquired chan acquiredBy
}

type acquiredBy struct {
	who     int
	release func() error
}

func newHerd(t *testing.T, waiters int) *herd {
	h := &herd{t: t, acquired: make(chan acquiredBy, waiters)}
	for range waiters {
		drops := new(atomic.Int32)
		s, p := connectCounted(t, recipes.WithStateListener(func(st recipes.State) {
			if st == recipes.StateSuspended {
				drops.Add(1)
			}
		}))
		h.sessions, h.proxies, h.drops = append(h.sessions, s), append(h.proxies, p), append(h.drops, drops)
	}
	return h
}

// start runs lock for waiter i in the background.
func (h *herd) start(i int, lock func(context.Context) (func() error, error)) {
	go func() {
		release, err := lock(bg())
		if err != nil {
			h.t.Error(err)
			close(h.acquired)
			return
		}
		h.acquired <- acquiredBy{i, release}
	}()
}

// flush returns once every notification sent to session i before now has
// arrived: ZooKeeper sends a session's notifications before the replies to
// its later requests.
func (h *herd) flush(i int) {
	_, _, err := h.sessions[i].Conn().Exists("/")
	require.NoError(h.t, err)
}

// settled waits until the server has n watches on the nodes below prefix:
// the waiters have finished queueing, so none of their own requests is left
// to be counted as a wake-up (a node that exists does not say its waiter is
// done: its listing and watch come after it).
func (h *herd) settled(prefix string, n int) {
	eventually(h.t, "the waiters' watches", func() bool {
		out := wchp(h.t, zktest.Servers(h.t)[0])
		return watchersUnder(out, prefix) >= n
	})
}

// watchersUnder counts the watches the "wchp" four-letter word lists on
// paths that start with prefix.
func watchersUnder(wchp, prefix string) int {
	n, in := 0, false
	for line := range strings.SplitSeq(wchp, "\n") {
		switch {
		case strings.HasPrefix(line, "/"):
			in = strings.HasPrefix(line, prefix)
		case in && strings.TrimSpace(line) != "":
			n++
		}
	}
	return n
}

// releaseAll releases first, then each waiter as it acquires, and returns,
// for each release, how many waiting sessions besides the new holder sent a
// request because of it.
func (h *herd) releaseAll(first func() error) []int {
	waiting := map[int]bool{}
	for i := range h.sessions {
		waiting[i] = true
	}
	release := first
	var woken []int
	for len(waiting) > 0 {
		before, dropsBefore := map[int]int64{}, map[int]int32{}
		for i := range waiting {
			h.flush(i)
			before[i], dropsBefore[i] = h.proxies[i].Traffic().Requests, h.drops[i].Load()
		}
		require.NoError(h.t, release())
		a, ok := <-h.acquired
		require.True(h.t, ok, "a waiter failed")
		delete(waiting, a.who)
		n := 0
		for i := range waiting {
			h.flush(i)
			sent := h.proxies[i].Traffic().Requests - before[i] - 1 // the flush itself
			switch {
			case sent > 0 && h.drops[i].Load() != dropsBefore[i]:
				// A reconnect (on a loaded machine) re-sends the
				// session's watches: that is not a wake-up.
				h.t.Logf("release %d: waiter %d reconnected and sent %d requests; not counted", len(woken), i, sent)
			case sent > 0:
				h.t.Logf("release %d: waiter %d sent %d requests", len(woken), i, sent)
				n++
			}
		}
		woken = append(woken, n)
		release = a.release
	}
	require.NoError(h.t, release())
	return woken
}

// TestRWMutexOneWriterWokenPerRelease: with 20 writers queued, a release
// wakes none of the others.
func TestRWMutexOneWriterWokenPerRelease(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/rw"
	holder := newRWMutex(t, connect(t), path)
	held, err := holder.Lock(bg())
	require.NoError(t, err)
	h := newHerd(t, 20)
	for i, s := range h.sessions {
		rw := newRWMutex(t, s, path)
		h.start(i, func(ctx context.Context) (func() error, error) {
			w, err := rw.Lock(ctx)
			return func() error { return w.Release(bg()) }, err
		})
		waitQueued(t, admin, path, i+2)
	}
	// Each watches the node ahead and its own, and that node's mark (a
	// write release is marked, for the writer behind).
	h.settled(path+"/", 3*len(h.sessions))
	for i, n := range h.releaseAll(func() error { return held.Release(bg()) }) {
		require.Zero(t, n, "release %d woke %d other writers", i, n)
	}
}

// TestSemaphoreOneWaiterWokenPerRelease: with 10 acquirers queued for a
// one-lease semaphore, a lease release wakes the acquirer at the gate, which
// takes the lease and lets the gate go, which wakes the next acquirer in
// line (who then waits at the gate): one waiting session besides the new
// holder, however many wait.
func TestSemaphoreOneWaiterWokenPerRelease(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/sem"
	first := newSemaphore(t, connect(t), path, 1)
	leases, err := first.Acquire(bg(), 1)
	require.NoError(t, err)
	h := newHerd(t, 10)
	for i, s := range h.sessions {
		sem := newSemaphore(t, s, path, 1)
		h.start(i, func(ctx context.Context) (func() error, error) {
			ls, err := sem.Acquire(ctx, 1)
			if err != nil {
				return nil, err
			}
			return func() error { return ls[0].Release(bg()) }, nil
		})
		// The first waits at the gate with a lease node; the rest queue
		// at the gate.
		waitQueued(t, admin, path+"/locks", i+1)
	}
	h.settled(path+"/locks/", len(h.sessions)-1) // each but the first watches the gate node ahead
	counts := h.releaseAll(func() error { return leases[0].Release(bg()) })
	for i, n := range counts {
		require.LessOrEqual(t, n, 1, "release %d woke %d other waiters", i, n)
	}
}
