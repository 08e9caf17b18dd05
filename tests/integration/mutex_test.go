package integration_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/locks"
)

// exclusion runs workers that each take the lock iterations times and
// increment a counter non-atomically inside (a load, a yield, a store): a
// second holder would lose updates. It also counts overlapping holders.
func exclusion(t *testing.T, mutexFor func(worker int) *locks.Mutex, workers, iterations int) {
	t.Helper()
	var counter, inside, overlaps atomic.Int64
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			m := mutexFor(w)
			for range iterations {
				held, err := m.Lock(bg())
				if err != nil {
					errs <- err
					return
				}
				if inside.Add(1) != 1 {
					overlaps.Add(1)
				}
				v := counter.Load()
				runtime.Gosched()
				counter.Store(v + 1)
				inside.Add(-1)
				if err := held.Release(bg()); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.Zero(t, overlaps.Load(), "two holders at once")
	assert.Equal(t, int64(workers*iterations), counter.Load(), "lost updates")
}

func TestMutexExcludesGoroutinesSharingOneValue(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	m := newMutex(t, connect(t), root+"/lock")
	exclusion(t, func(int) *locks.Mutex { return m }, 20, 50)
}

func TestMutexExcludesSeparateClients(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	mutexes := make([]*locks.Mutex, 20)
	for i := range mutexes {
		mutexes[i] = newMutex(t, connect(t), root+"/lock")
	}
	exclusion(t, func(w int) *locks.Mutex { return mutexes[w] }, 20, 50)
}

func TestMutexReentrancy(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/lock"
	m := newMutex(t, connect(t), path)

	c1, err := m.Lock(bg())
	require.NoError(t, err)
	c2, err := m.Lock(c1.Context())
	require.NoError(t, err)
	c3, err := m.Lock(c2.Context())
	require.NoError(t, err)
	require.Len(t, children(t, admin, path), 1, "re-entry must not create a node")

	// A second goroutine, sharing the Mutex value but not the context,
	// queues and must stay out until the third Unlock.
	var got atomic.Bool
	secondDone := lockAndUnlock(m, &got)
	waitQueued(t, admin, path, 2)

	require.NoError(t, c3.Release(bg()))
	require.NoError(t, c2.Release(bg()))
	assert.False(t, got.Load(), "second goroutine got in while the lock was held once")
	assert.NoError(t, c1.Err(), "hold ended before the last Release")
	assert.NoError(t, c1.Context().Err(), "hold's context cancelled before the last Release")
	assert.Same(t, c1, c3, "re-entry returns the same hold")
	require.NoError(t, c1.Release(bg()))
	assert.ErrorIs(t, context.Cause(c1.Context()), locks.ErrReleased)

	require.NoError(t, <-secondDone)
	assert.True(t, got.Load())
	assert.Empty(t, children(t, admin, path))
}

// TestMutexReleaseNotHeld: a Release beyond the Locks it matches returns
// ErrNotHeld and deletes nothing, even while someone else holds the lock.
func TestMutexReleaseNotHeld(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/lock"
	s := connect(t)
	m := newMutex(t, s, path)

	held, err := m.Lock(bg())
	require.NoError(t, err)
	inner, err := m.Lock(held.Context())
	require.NoError(t, err)
	require.NoError(t, inner.Release(bg()))
	require.NoError(t, held.Release(bg()))
	assert.ErrorIs(t, held.Release(bg()), locks.ErrNotHeld, "double Release")
	assert.ErrorIs(t, held.Err(), locks.ErrReleased)

	next, err := newMutex(t, connect(t), path).Lock(bg())
	require.NoError(t, err)
	before := children(t, admin, path)
	assert.ErrorIs(t, held.Release(bg()), locks.ErrNotHeld)
	assert.Equal(t, before, children(t, admin, path), "a refused Release deleted something")
	require.NoError(t, next.Release(bg()))
}

func TestMutexTryLock(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/lock"
	a, b := newMutex(t, connect(t), path), newMutex(t, connect(t), path)

	held, ok, err := a.TryLock(bg())
	require.NoError(t, err)
	require.True(t, ok)
	_, ok, err = b.TryLock(bg())
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Len(t, children(t, admin, path), 1, "a failed TryLock left its node")

	again, ok, err := a.TryLock(held.Context())
	require.NoError(t, err)
	assert.True(t, ok, "TryLock re-enters")
	require.NoError(t, again.Release(bg()))
	require.NoError(t, held.Release(bg()))

	held, ok, err = b.TryLock(bg())
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, held.Release(bg()))
}

func TestMutexTimeoutAndCancelLeaveNoNode(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/lock"
	holder := newMutex(t, connect(t), path)
	held, err := holder.Lock(bg())
	require.NoError(t, err)
	holderNode := children(t, admin, path)

	waiter := newMutex(t, connect(t), path)
	ctx, cancel := context.WithTimeout(bg(), 300*time.Millisecond)
	defer cancel()
	_, err = waiter.Lock(ctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, holderNode, children(t, admin, path), "timed-out waiter left its node")

	ctx, cancel = context.WithCancel(bg())
	done := make(chan error, 1)
	go func() {
		_, err := waiter.Lock(ctx)
		done <- err
	}()
	waitQueued(t, admin, path, 2)
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
	assert.Equal(t, holderNode, children(t, admin, path), "cancelled waiter left its node")

	// Cancelled with a cause of the caller's: both match.
	causeCtx, cancelCause := context.WithCancelCause(bg())
	go func() {
		_, err := waiter.Lock(causeCtx)
		done <- err
	}()
	waitQueued(t, admin, path, 2)
	cancelCause(errGaveUp)
	err = <-done
	assert.ErrorIs(t, err, errGaveUp)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, holderNode, children(t, admin, path), "cancelled waiter left its node")

	require.NoError(t, held.Release(bg()))
}

// TestMutexFIFOAndOneWakeupPerRelease queues 50 waiters, each on its own
// session, and checks that they are served in queue order and that each
// release wakes exactly one of them: no other waiting session sends a single
// request (a woken waiter would at least re-read) or receives a notification.
// The one it wakes takes the lock with no request at all: the first waiter
// was second in line when it listed, and each later one learns from the
// release's mark that the node ahead of it held (seqnode/marks.go). Its
// notifications are that node's deletion and, but for the first, the mark's,
// both from the release's one transaction; the last waiter to join may also
// get the directory watch of its first listing, which fires once and wakes
// nothing.
func TestMutexFIFOAndOneWakeupPerRelease(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/lock"
	const waiters = 50

	first := newMutex(t, connect(t), path)
	held, err := first.Lock(bg())
	require.NoError(t, err)

	type acquired struct {
		who  int
		held *locks.Hold
	}
	sessions := make([]*recipes.Session, waiters)
	proxies := make([]*testenv.Proxy, waiters) // proxies[i] counts sessions[i]'s traffic
	got := make(chan acquired)
	errs := make(chan error, waiters)
	for i := range waiters {
		sessions[i], proxies[i] = connectCounted(t)
		m := newMutex(t, sessions[i], path)
		go func() {
			h, err := m.Lock(bg())
			if err != nil {
				errs <- err
				return
			}
			got <- acquired{i, h}
		}()
		waitQueued(t, admin, path, i+2)
	}
	// Let every waiter finish queueing (its own node watched), so that
	// only what a release causes is counted: a flush request on each
	// session returns after the waiter's requests sent before it.
	flush := func(i int) {
		_, _, err := sessions[i].Conn().Exists(path)
		require.NoError(t, err)
	}
	eventually(t, "waiters to watch", func() bool {
		for i := range waiters {
			if proxies[i].Traffic().Requests < 4 { // create, list, two watches
				return false
			}
		}
		return true
	})

	release := func(h *locks.Hold) { require.NoError(t, h.Release(bg())) }
	var events int64
	for next := range waiters {
		before := make([]testenv.Traffic, waiters)
		for i := next; i < waiters; i++ {
			flush(i)
			before[i] = proxies[i].Traffic()
		}
		release(held)
		var a acquired
		select {
		case a = <-got:
		case err := <-errs:
			t.Fatal(err)
		}
		require.Equal(t, next, a.who, "served out of queue order")
		woken := proxies[next].Traffic().Sub(before[next])
		require.Zero(t, woken.Requests, "release %d: the next waiter read before it held", next)
		// ZooKeeper sends a session's notifications before the replies
		// to its later requests, so after a flush every notification the
		// release caused has arrived.
		for i := next + 1; i < waiters; i++ {
			flush(i)
			d := proxies[i].Traffic().Sub(before[i])
			require.Equal(t, int64(1), d.Requests, "release %d woke waiter %d too", next, i)
			if i < waiters-1 {
				require.Zero(t, d.WatchEvents, "release %d notified waiter %d", next, i)
			}
			events += d.WatchEvents
		}
		events += woken.WatchEvents
		held = a.held
	}
	release(held)
	// One deletion per release, and a mark for each but the first.
	assert.LessOrEqual(t, events, int64(2*waiters-1+1), "notifications to waiting sessions")
	assert.GreaterOrEqual(t, events, int64(2*waiters-1))
	assert.Empty(t, children(t, admin, path))
}

func TestMutexBadInputCreatesNothing(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	s := connect(t)
	for _, p := range []string{"", "relative/lock", root + "/lock/", root + "//lock", root + "/./lock", "/"} {
		_, err := locks.NewMutex(s, p)
		assert.ErrorIs(t, err, recipes.ErrInvalid, "path %q", p)
	}
	_, err := locks.NewMutex(s, root+"/lock", recipes.WithData(make([]byte, recipes.MaxDataSize+1)))
	assert.ErrorIs(t, err, recipes.ErrInvalid)
	assert.Contains(t, err.Error(), "MaxDataSize")
	_, err = locks.NewMutex(nil, root+"/lock")
	assert.ErrorIs(t, err, recipes.ErrInvalid)
	assert.Contains(t, err.Error(), "nil session")
	ok, _, err := admin.Exists(root)
	require.NoError(t, err)
	assert.False(t, ok, "bad input created %s", root)

	// The largest data allowed does go through.
	m := newMutex(t, s, root+"/lock", recipes.WithData(make([]byte, recipes.MaxDataSize)))
	held, err := m.Lock(bg())
	require.NoError(t, err)
	require.NoError(t, held.Release(bg()))
}
