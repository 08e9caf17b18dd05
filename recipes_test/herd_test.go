package recipes_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/zktest"
)

// herd is a set of waiters, one session each, queued behind a holder. It
// releases them in turn and counts, after each release, the waiting
// sessions other than the new holder that did anything (sent a request).
type herd struct {
	t        *testing.T
	sessions []*recipes.Session
	proxies  []*zktest.Proxy // proxies[i] counts sessions[i]'s traffic
	acquired chan acquiredBy
}

type acquiredBy struct {
	who     int
	release func() error
}

func newHerd(t *testing.T, waiters int) *herd {
	h := &herd{t: t, acquired: make(chan acquiredBy, waiters)}
	for range waiters {
		s, p := connectCounted(t)
		h.sessions, h.proxies = append(h.sessions, s), append(h.proxies, p)
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
		before := map[int]int64{}
		for i := range waiting {
			h.flush(i)
			before[i] = h.proxies[i].Traffic().Requests
		}
		require.NoError(h.t, release())
		a, ok := <-h.acquired
		require.True(h.t, ok, "a waiter failed")
		delete(waiting, a.who)
		n := 0
		for i := range waiting {
			h.flush(i)
			if h.proxies[i].Traffic().Requests-before[i] > 1 { // the flush itself
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
	counts := h.releaseAll(func() error { return leases[0].Release(bg()) })
	for i, n := range counts {
		require.LessOrEqual(t, n, 1, "release %d woke %d other waiters", i, n)
	}
}
