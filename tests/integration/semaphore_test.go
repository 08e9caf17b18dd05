package integration_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/seqnode"
	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/locks"
)

func newSemaphore(t *testing.T, s *recipes.Session, path string, leases int) *locks.Semaphore {
	t.Helper()
	sem, err := locks.NewSemaphore(s, path, leases)
	require.NoError(t, err)
	return sem
}

// leaseLocker makes one lease of a semaphore a Locker, for the helpers
// written for locks.
type leaseLocker struct{ sem *locks.Semaphore }

func (l leaseLocker) Lock(ctx context.Context) (*locks.Hold, error) {
	ls, err := l.sem.Acquire(ctx, 1)
	if err != nil {
		return nil, err
	}
	return ls[0], nil
}

func (l leaseLocker) Path() string { return l.sem.Path() }

// TestSemaphoreNeverExceedsMax has 10 clients take one of 5 leases 3 times
// each: never more than 5 at once, and 5 at once when each of the first
// five to get one keeps it until all five have.
func TestSemaphoreNeverExceedsMax(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	const clients, most = 10, 5
	tr := newTracker(map[string]int{"L": most})
	full := tr.filled("L")
	var wg sync.WaitGroup
	for range clients {
		sem := newSemaphore(t, connect(t), root+"/sem", most)
		wg.Go(func() {
			for range 3 {
				leases, err := sem.Acquire(bg(), 1)
				if !assert.NoError(t, err) {
					return
				}
				tr.enter("L")
				select {
				case <-full:
				case <-time.After(waitLong):
					t.Errorf("%d leases held at most, want %d", tr.peakOf("L"), most)
				}
				tr.leave("L")
				assert.NoError(t, leases[0].Release(bg()))
			}
		})
	}
	wg.Wait()
	tr.check(t)
	assert.Equal(t, most, tr.peakOf("L"))
	assert.Equal(t, clients*3, tr.entriesOf("L"))
}

// TestSemaphoreRandomQuantities is Curator's testMaxPerSession: clients
// asking for random numbers of leases never hold more than the maximum.
func TestSemaphoreRandomQuantities(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	const clients, most = 6, 4
	var mu sync.Mutex
	inUse, peak := 0, 0
	var wg sync.WaitGroup
	for range clients {
		sem := newSemaphore(t, connect(t), root+"/sem", most)
		wg.Go(func() {
			for range 5 {
				n := rand.IntN(most) + 1
				leases, err := sem.Acquire(bg(), n)
				if !assert.NoError(t, err) || !assert.Len(t, leases, n) {
					return
				}
				mu.Lock()
				inUse += n
				peak = max(peak, inUse)
				mu.Unlock()
				time.Sleep(10 * time.Millisecond) // the work done under the leases
				mu.Lock()
				inUse -= n
				mu.Unlock()
				for _, l := range leases {
					assert.NoError(t, l.Release(bg()))
				}
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, peak, most)
}

// TestSemaphoreLeaseComesBackWhenItsSessionCloses: a lease dies with its
// session, and a waiter gets it.
func TestSemaphoreLeaseComesBackWhenItsSessionCloses(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	holderSession := connect(t)
	holder := newSemaphore(t, holderSession, root+"/sem", 1)
	leases, err := holder.Acquire(bg(), 1)
	require.NoError(t, err)

	waiter := newSemaphore(t, connect(t), root+"/sem", 1)
	got := lockAndUnlock(leaseLocker{waiter}, nil)
	waitQueued(t, holderSession.Conn(), root+"/sem/locks", 1) // the waiter is at the gate
	require.NoError(t, holderSession.Close())
	<-leases[0].Done()
	assert.ErrorIs(t, leases[0].Err(), locks.ErrLockLost)
	require.NoError(t, <-got)
}

func TestSemaphoreCancelWhileWaitingLeavesNoNode(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/sem"
	holder := newSemaphore(t, connect(t), path, 2)
	leases, err := holder.Acquire(bg(), 2)
	require.NoError(t, err)

	waiter := newSemaphore(t, connect(t), path, 2)
	ctx, cancel := context.WithCancel(bg())
	done := make(chan error, 1)
	go func() {
		_, err := waiter.Acquire(ctx, 1)
		done <- err
	}()
	waitQueued(t, admin, path+"/leases", 3) // its lease node waits
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
	assert.Len(t, children(t, admin, path+"/leases"), 2, "the cancelled waiter left its lease")
	assert.Empty(t, children(t, admin, path+"/locks"), "the cancelled waiter left the gate held")

	ctx, cancel = context.WithTimeout(bg(), 200*time.Millisecond)
	defer cancel()
	_, err = waiter.Acquire(ctx, 1)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Len(t, children(t, admin, path+"/leases"), 2, "the timed-out waiter left its lease")
	for _, l := range leases {
		require.NoError(t, l.Release(bg()))
	}
}

// TestSemaphoreWaitingLeaseDeletedIsRecreated is Curator's
// testNoOrphanedNodes: someone deletes the lease node of a waiting
// acquirer; it queues a new one and still gets its lease.
func TestSemaphoreWaitingLeaseDeletedIsRecreated(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/sem"
	holder := newSemaphore(t, connect(t), path, 1)
	leases, err := holder.Acquire(bg(), 1)
	require.NoError(t, err)
	held := children(t, admin, path+"/leases")[0]

	waiter := newSemaphore(t, connect(t), path, 1)
	got := lockAndUnlock(leaseLocker{waiter}, nil)
	waitQueued(t, admin, path+"/leases", 2)
	for _, n := range children(t, admin, path+"/leases") {
		if n != held {
			require.NoError(t, admin.Delete(path+"/leases/"+n, -1))
		}
	}
	// It queues again: two lease nodes once more, neither the deleted one.
	waitQueued(t, admin, path+"/leases", 2)
	require.NoError(t, leases[0].Release(bg()))
	require.NoError(t, <-got)
}

func TestSemaphoreRefusesADifferentMax(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	path := root + "/sem"
	three := newSemaphore(t, connect(t), path, 3)
	leases, err := three.Acquire(bg(), 1)
	require.NoError(t, err)

	four := newSemaphore(t, connect(t), path, 4)
	_, err = four.Acquire(bg(), 1)
	assert.ErrorIs(t, err, locks.ErrMaxLeases)
	assert.Contains(t, err.Error(), "3 leases")
	again := newSemaphore(t, connect(t), path, 3)
	more, err := again.Acquire(bg(), 2)
	require.NoError(t, err, "a client that agrees is not refused")
	for _, l := range append(leases, more...) {
		require.NoError(t, l.Release(bg()))
	}
}

// TestSemaphoreBadInputCreatesNothing: a semaphore of fewer than 1 lease,
// or more than Curator's maxLeases (a Java int) can be, is refused, and so
// is an Acquire of a number of leases it cannot have, a shared count's
// included; nothing is created.
func TestSemaphoreBadInputCreatesNothing(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	s := connect(t)
	for _, leases := range []int{0, -1, pastJavaInt} {
		_, err := locks.NewSemaphore(s, root+"/sem", leases)
		assert.ErrorIs(t, err, recipes.ErrInvalid, "%d leases", leases)
	}
	if pastJavaInt != 0 {
		_, err := locks.NewSemaphore(s, root+"/sem", pastJavaInt)
		assert.ErrorContains(t, err, "a semaphore takes at most 2147483647 leases (Curator's limit, a Java int), not 2147483648")
	}
	_, err := locks.NewSemaphore(s, "sem", 2)
	assert.ErrorIs(t, err, recipes.ErrInvalid)
	sem := newSemaphore(t, s, root+"/sem", 2)
	for _, n := range []int{0, -1, 3} {
		_, err := sem.Acquire(bg(), n)
		assert.ErrorIs(t, err, recipes.ErrInvalid, "n=%d", n)
	}
	most := newSemaphore(t, s, root+"/most", math.MaxInt32)
	assert.Equal(t, math.MaxInt32, most.MaxLeases())
	counted, err := locks.NewSharedCountSemaphore(s, root+"/counted", root+"/count")
	require.NoError(t, err)
	for _, n := range []int{0, pastJavaInt} {
		_, err = counted.Acquire(bg(), n)
		assert.ErrorIs(t, err, recipes.ErrInvalid, "n=%d of a shared count", n)
	}
	if pastJavaInt != 0 {
		assert.ErrorContains(t, err, "cannot take 2147483648 leases of "+root+"/counted, which has at most 2147483647")
	}
	ok, _, err := admin.Exists(root)
	require.NoError(t, err)
	assert.False(t, ok, "bad input created %s", root)
}

func TestSemaphoreTryAcquireAndLeaseRelease(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/sem"
	sem := newSemaphore(t, connect(t), path, 2)
	leases, ok, err := sem.TryAcquire(bg(), 2)
	require.NoError(t, err)
	require.True(t, ok)
	_, ok, err = sem.TryAcquire(bg(), 1)
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Len(t, children(t, admin, path+"/leases"), 2, "a failed TryAcquire left a lease")

	ps, err := sem.Participants(bg())
	require.NoError(t, err)
	require.Len(t, ps, 2)
	assert.Equal(t, leases[0].Node(), ps[0].Path)
	assert.Equal(t, ps[1].Token, leases[1].Token())
	assert.Equal(t, path, leases[1].Path())

	// Leases are released on their own, from any goroutine; twice does
	// nothing, and says so.
	done := make(chan error, 1)
	go func() { done <- leases[1].Release(bg()) }()
	require.NoError(t, <-done)
	require.ErrorIs(t, leases[1].Release(bg()), locks.ErrNotHeld)
	assert.ErrorIs(t, leases[1].Err(), locks.ErrReleased)
	assert.NoError(t, leases[0].Err())
	require.NoError(t, leases[0].Release(bg()))
}

// TestLeaseTokenStaysWhileHeld: a lease that waited for a lease to come free
// holds on a listing made after the release, whose pzxid is its token (larger
// than its node's creation zxid). Watching its node's data later (Revoked)
// reads that zxid, which must not replace the token: a hold's token never
// changes while it lasts.
func TestLeaseTokenStaysWhileHeld(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/sem"
	first, err := newSemaphore(t, connect(t), path, 1).Acquire(bg(), 1)
	require.NoError(t, err)
	got := make(chan []*locks.Hold, 1)
	go func() {
		leases, err := newSemaphore(t, connect(t), path, 1).Acquire(bg(), 1)
		assert.NoError(t, err)
		got <- leases
	}()
	waitQueued(t, admin, path+"/leases", 2) // the second waits for a lease
	require.NoError(t, first[0].Release(bg()))
	leases := <-got
	require.Len(t, leases, 1)
	h := leases[0]
	token := h.Token()
	_, st, err := admin.Exists(h.Node())
	require.NoError(t, err)
	require.Greater(t, token, st.Czxid, "the token is the pzxid of the listing after the release")

	revoked := h.Revoked() // watches the node's data: reads it
	_, err = admin.Set(h.Node(), []byte("__REVOKE__"), -1)
	require.NoError(t, err)
	select {
	case <-revoked: // the node has been read twice by now
	case <-time.After(waitLong):
		t.Fatal("the revocation request was not heard")
	}
	assert.Equal(t, token, h.Token(), "the token changed while the lease was held")
	require.NoError(t, h.Release(bg()))
}

// TestSemaphoreAgreesAgainAfterThePathIsReaped: the path's node records the
// maximum, and ZooKeeper reaps it (a container) when the semaphore is idle.
// A Semaphore that agreed before records it again on its next acquire, so a
// client with another maximum is still refused rather than let in beside it.
func TestSemaphoreAgreesAgainAfterThePathIsReaped(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/sem"
	one := newSemaphore(t, connect(t), path, 1)
	leases, err := one.Acquire(bg(), 1)
	require.NoError(t, err)
	require.NoError(t, leases[0].Release(bg()))
	eventually(t, "ZooKeeper to reap the idle path", func() bool {
		ok, _, err := admin.Exists(path)
		require.NoError(t, err)
		return !ok
	})
	leases, err = one.Acquire(bg(), 1)
	require.NoError(t, err)
	_, err = newSemaphore(t, connect(t), path, 2).Acquire(bg(), 1)
	assert.ErrorIs(t, err, locks.ErrMaxLeases, "a semaphore of 2 let in beside one of 1")
	require.NoError(t, leases[0].Release(bg()))
}

// TestSemaphoreIdleTakesANewMax: the maximum recorded in the path's node
// stands only while someone holds a lease or waits for one; an idle
// semaphore takes the next client's, at once rather than once ZooKeeper has
// reaped the path. A client that agreed on the old one agrees again, and is
// refused while the new one is in use.
func TestSemaphoreIdleTakesANewMax(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/sem"
	// A persistent path is never reaped, so the record stays as written.
	_, err := admin.Create(root, nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	_, err = admin.Create(path, nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	t.Cleanup(func() {
		eventually(t, "the semaphore's directories to be reaped", func() bool {
			err := admin.Delete(path, -1)
			return err == nil || errors.Is(err, zk.ErrNoNode)
		})
		require.NoError(t, admin.Delete(root, -1))
	})

	two := newSemaphore(t, connect(t), path, 2)
	leases, err := two.Acquire(bg(), 2)
	require.NoError(t, err)
	for _, l := range leases {
		require.NoError(t, l.Release(bg()))
	}

	five := newSemaphore(t, connect(t), path, 5)
	leases, err = five.Acquire(bg(), 5)
	require.NoError(t, err, "an idle semaphore keeps its old maximum")
	_, err = two.Acquire(bg(), 1)
	assert.ErrorIs(t, err, locks.ErrMaxLeases, "a semaphore of 2 let in beside one of 5")
	for _, l := range leases {
		require.NoError(t, l.Release(bg()))
	}
}

// TestSemaphoresRaceForAnEmptyPath: two semaphores with different maximums
// that start on an empty path at once: exactly one maximum is recorded, the
// other client gets ErrMaxLeases, and they never hold at once.
func TestSemaphoresRaceForAnEmptyPath(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	path := root + "/sem"
	sems := []*locks.Semaphore{newSemaphore(t, connect(t), path, 1), newSemaphore(t, connect(t), path, 3)}
	var wg sync.WaitGroup
	errs := make([]error, len(sems))
	held := make([][]*locks.Hold, len(sems))
	for i, sem := range sems {
		wg.Go(func() { held[i], errs[i] = sem.Acquire(bg(), 1) })
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		if err == nil {
			won++
			require.NoError(t, held[i][0].Release(bg()))
			continue
		}
		assert.ErrorIs(t, err, locks.ErrMaxLeases)
	}
	assert.Equal(t, 1, won, "errors: %v", errs)
}

// TestSemaphoreTryAcquireRightAfterAnAcquire: an acquisition does not wait
// for its gate's delete to be answered, but the session's next request goes
// out after that delete, so the same session's TryAcquire right after it
// finds the gate free every time.
func TestSemaphoreTryAcquireRightAfterAnAcquire(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	sem := newSemaphore(t, connect(t), root+"/sem", 2)
	for i := range 30 {
		first, err := sem.Acquire(bg(), 1)
		require.NoError(t, err)
		second, ok, err := sem.TryAcquire(bg(), 1)
		require.NoError(t, err)
		require.True(t, ok, "TryAcquire %d right after an Acquire found the gate taken", i)
		require.NoError(t, first[0].Release(bg()))
		require.NoError(t, second[0].Release(bg()))
	}
}

// TestSemaphoreGateHandsOffWithAMark: the semaphore's gate is a queue of
// Mutex nodes, released with a mark as a Mutex's are (seqnode/marks.go). An
// acquirer third in line at the gate watches, in one round trip, the node
// ahead, that node's mark and its own node; when the one ahead leaves the
// gate, having taken its lease, the acquirer goes through without listing
// the gate again.
func TestSemaphoreGateHandsOffWithAMark(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/sem"
	gate := path + "/locks"
	leases, err := newSemaphore(t, connect(t), path, 1).Acquire(bg(), 1)
	require.NoError(t, err)
	held := leases[0] // the only lease
	acquire := func(s *recipes.Session) <-chan lockResult {
		return lockInBackgroundWith(leaseLocker{newSemaphore(t, s, path, 1)}.Lock)
	}
	sb, sc := connect(t), connect(t)
	b := acquire(sb) // through the gate, waiting for the lease
	eventually(t, "B at the gate", func() bool { return len(children(t, admin, gate)) == 1 })
	c := acquire(sc) // second at the gate
	eventually(t, "C at the gate", func() bool { return len(children(t, admin, gate)) == 2 })
	nodes := inQueueOrder(t, admin, gate)
	eventually(t, "C to watch B's gate node", func() bool { return watchedBy(t, nodes[0], sc.ID()) })
	sd, pd := connectCounted(t)
	listings := pd.Counter(func(op int32, p string) bool {
		return (op == testenv.OpGetChildren || op == testenv.OpGetChildren2) && p == gate
	})
	d := acquire(sd) // third
	eventually(t, "D at the gate", func() bool { return len(children(t, admin, gate)) == 3 })
	nodes = inQueueOrder(t, admin, gate)
	eventually(t, "D to watch C's gate node, its mark and its own node", func() bool {
		return watchedBy(t, nodes[1], sd.ID()) && watchedBy(t, seqnode.MarkOf(nodes[1]), sd.ID()) && watchedBy(t, nodes[2], sd.ID())
	})
	require.EqualValues(t, 1, listings(), "D's listings of the gate once queued")

	// Each release hands the lease to the next, which leaves the gate to
	// the one behind it: B's unmarked (it had the gate at once, with
	// nobody behind), C's marked.
	for i, next := range []<-chan lockResult{b, c, d} {
		require.NoError(t, held.Release(bg()), "release %d", i)
		r := <-next
		require.NoError(t, r.err, "acquirer %d", i)
		held = r.hold
	}
	require.NoError(t, held.Release(bg()))
	assert.EqualValues(t, 1, listings(), "D's listings of the gate")
	eventually(t, "no session to watch a mark", func() bool { return !marksWatched(t, root) })
}

// TestSemaphoreRefusalIsNotACancellation: a semaphore that already agreed
// on its path checks the layout beside taking its leases; a refusal
// (another Semaphore of the session found a lock's node there) stops the
// leases, and the acquire reports the refusal, not their cancellation.
func TestSemaphoreRefusalIsNotACancellation(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/sem"
	s := connect(t)
	agreed, err := locks.NewSemaphore(s, path, 2)
	require.NoError(t, err)
	leases, err := agreed.Acquire(bg(), 1)
	require.NoError(t, err)
	require.NoError(t, leases[0].Release(bg()))

	// A lock's node arrives at the path.
	lock, err := admin.Create(path+"/_c_0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-lock-", nil, zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, admin.Delete(lock, -1)) })
	fresh, err := locks.NewSemaphore(s, path, 2)
	require.NoError(t, err)
	_, err = fresh.Acquire(bg(), 1)
	require.ErrorIs(t, err, recipes.ErrOtherRecipe)

	_, err = agreed.Acquire(bg(), 1)
	require.ErrorIs(t, err, recipes.ErrOtherRecipe)
	require.NotErrorIs(t, err, context.Canceled, "the refusal was reported as a cancellation: %v", err)
	assert.Equal(t, 1, len(children(t, admin, path)), "the refused acquisitions left nodes: %v", children(t, admin, path))
}
