package integration_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/locks"
)

func TestMutexParticipantsDataAndDefault(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/lock"
	a := newMutex(t, connect(t), path)
	b := newMutex(t, connect(t), path, recipes.WithData([]byte("worker-b")))

	held, err := a.Lock(bg())
	require.NoError(t, err)
	done := lockAndUnlock(b, nil)
	waitQueued(t, admin, path, 2)

	ps, err := b.Participants(bg())
	require.NoError(t, err)
	require.Len(t, ps, 2)
	assert.Equal(t, string(recipes.DefaultData()), string(ps[0].Data), "holder first, with default data")
	assert.Equal(t, "worker-b", string(ps[1].Data))
	token := held.Token()
	assert.Equal(t, token, ps[0].Token)
	assert.True(t, strings.HasPrefix(ps[0].Path, path+"/_c_"), ps[0].Path)
	assert.WithinDuration(t, time.Now(), ps[0].Created, time.Minute)

	require.NoError(t, held.Release(bg()))
	require.NoError(t, <-done)
	ps, err = a.Participants(bg())
	require.NoError(t, err)
	assert.Empty(t, ps)
}

func TestMutexFencingTokensGrowAndMultiIsGuarded(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/lock"
	m := newMutex(t, connect(t), path)
	var last int64
	for range 3 {
		held, err := m.Lock(bg())
		require.NoError(t, err)
		token := held.Token()
		assert.Greater(t, token, last)
		last = token
		require.NoError(t, held.Release(bg()))
	}

	held, err := m.Lock(bg())
	require.NoError(t, err)
	data := root + "/data"
	_, err = held.Multi(bg(), &zk.CreateRequest{Path: data, Acl: zk.WorldACL(zk.PermAll)})
	require.NoError(t, err)
	ok, _, err := admin.Exists(data)
	require.NoError(t, err)
	assert.True(t, ok, "guarded multi did not apply")

	// Someone deletes our node: the hold is lost, and a guarded multi must
	// not apply.
	nodes := children(t, admin, path)
	require.Len(t, nodes, 1)
	require.NoError(t, admin.Delete(path+"/"+nodes[0], -1))
	<-held.Done()
	assert.ErrorIs(t, held.Err(), locks.ErrLockLost)
	_, err = held.Multi(bg(), &zk.DeleteRequest{Path: data, Version: -1})
	assert.ErrorIs(t, err, locks.ErrLockLost)
	ok, _, err = admin.Exists(data)
	require.NoError(t, err)
	assert.True(t, ok, "multi applied after the lock was lost")
	assert.ErrorIs(t, held.Release(bg()), locks.ErrLockLost)
	require.NoError(t, admin.Delete(data, -1))
}

func TestMutexRevocation(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	path := root + "/lock"
	s := connect(t)
	holder := newMutex(t, s, path)
	held, err := holder.Lock(bg())
	require.NoError(t, err)

	// The holder lets go when asked, as Curator's testRevoking does.
	released := make(chan error, 1)
	go func() {
		<-held.Revoked()
		released <- held.Release(bg())
	}()
	other := newMutex(t, connect(t), path)
	ps, err := other.Participants(bg())
	require.NoError(t, err)
	require.Len(t, ps, 1)
	require.NoError(t, locks.Revoke(bg(), s, ps[0].Path))
	require.NoError(t, <-released)

	ctx, cancel := context.WithTimeout(bg(), waitLong)
	defer cancel()
	h2, err := other.Lock(ctx)
	require.NoError(t, err)
	require.NoError(t, h2.Release(bg()))
	err = locks.Revoke(bg(), s, ps[0].Path)
	assert.ErrorIs(t, err, locks.ErrNotRevocable, "a gone node has nothing to revoke")
	assert.ErrorIs(t, err, zk.ErrNoNode)
}

// TestHoldOutlivesAcquireDeadline: the context given to Lock bounds only
// the wait. Taken with a short deadline and kept for a second past it, the
// lock is still held (another session's TryLock fails), the hold's context
// still live and re-entrant; it ends on loss (someone deletes the node) and
// on release. Cancelling the acquisition context after the acquire does not
// end it either.
func TestHoldOutlivesAcquireDeadline(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/lock"
	m := newMutex(t, connect(t), path)
	other := newMutex(t, connect(t), path)
	type key struct{}

	h, wait := lockBeforeDeadline(t, m, context.WithValue(bg(), key{}, "v"))
	<-wait.Done()
	select {
	case <-h.Done():
		t.Fatalf("the hold ended with the acquisition's deadline: %v", h.Err())
	case <-time.After(time.Second):
	}
	require.NoError(t, h.Err())
	require.NoError(t, h.Context().Err())
	assert.Equal(t, "v", h.Context().Value(key{}), "the hold's context carries the acquisition's values")
	_, ok, err := other.TryLock(bg())
	require.NoError(t, err)
	assert.False(t, ok, "another session took the lock past the first one's acquisition deadline")

	// Reentrancy through the hold's context works past the deadline: the
	// same Hold again, with no second node, and one Release per Lock.
	again, err := m.Lock(h.Context())
	require.NoError(t, err)
	assert.Same(t, h, again, "re-entry past the acquisition deadline")
	nodes := children(t, admin, path)
	require.Len(t, nodes, 1, "re-entry created a node")
	require.NoError(t, again.Release(bg()))
	require.NoError(t, h.Context().Err(), "the inner Release ended the hold")

	// Loss still cancels it.
	require.NoError(t, admin.Delete(path+"/"+nodes[0], -1))
	<-h.Context().Done()
	assert.ErrorIs(t, context.Cause(h.Context()), locks.ErrLockLost)
	assert.ErrorIs(t, h.Release(bg()), locks.ErrLockLost)

	// Cancelling the acquisition context does not end the hold; Release
	// does.
	parent, cancelParent := context.WithCancel(bg())
	h, err = m.Lock(parent)
	require.NoError(t, err)
	cancelParent()
	assert.NoError(t, h.Context().Err(), "the hold followed its acquisition context's cancellation")
	require.NoError(t, h.Release(bg()))
	assert.ErrorIs(t, context.Cause(h.Context()), locks.ErrReleased)
	assert.ErrorIs(t, h.Err(), locks.ErrReleased)
	assert.Empty(t, children(t, admin, path))
}

// TestUnlockAfterLossEndsWithLoss: the holder's node is deleted by someone
// else and the holder unlocks before its watch tells it. Unlock reports the
// loss, and the held context ends with it, not with ErrReleased; the same
// for a semaphore's lease.
func TestUnlockAfterLossEndsWithLoss(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	proxy := testenv.ProxyT(t)
	s := connect(t, recipes.WithDialer(proxy.Dialer))
	m := newMutex(t, s, root+"/lock")
	held, err := m.Lock(bg())
	require.NoError(t, err)
	err = releaseUnaware(t, proxy, admin, held)
	assert.ErrorIs(t, err, locks.ErrLockLost, "Release")
	assert.ErrorIs(t, held.Err(), locks.ErrLockLost, "the hold")
	assert.ErrorIs(t, context.Cause(held.Context()), locks.ErrLockLost, "the hold's context")

	sem := newSemaphore(t, s, root+"/sem", 1)
	leases, err := sem.Acquire(bg(), 1)
	require.NoError(t, err)
	assert.ErrorIs(t, releaseUnaware(t, proxy, admin, leases[0]), locks.ErrLockLost, "a lease's Release")
	assert.ErrorIs(t, leases[0].Err(), locks.ErrLockLost, "the lease")
}

// releaseUnaware deletes h's node behind its back and releases h before the
// deletion's notification can reach it: the proxy holds everything the
// server sends until Release has sent its delete.
func releaseUnaware(t *testing.T, proxy *testenv.Proxy, admin *zk.Conn, h *locks.Hold) error {
	t.Helper()
	proxy.StallDown()
	defer proxy.Restore()
	require.NoError(t, admin.Delete(h.Node(), -1))
	before := proxy.Traffic()
	released := make(chan error, 1)
	go func() { released <- h.Release(bg()) }()
	// Release stops the hold's watcher before it sends the delete.
	eventually(t, "Release's delete to be sent", func() bool { return proxy.Traffic().Sub(before).Requests > 0 })
	proxy.Restore()
	return <-released
}

// TestRevokeOnlyLockNodes: Revoke refuses, and leaves untouched, whatever is
// not a lock node a holder could be listening on: a semaphore's path with
// its recorded maximum, its lease nodes, a barrier, a node that does not
// exist.
func TestRevokeOnlyLockNodes(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	s := connect(t)
	sem := newSemaphore(t, s, root+"/sem", 3)
	leases, err := sem.Acquire(bg(), 1)
	require.NoError(t, err)
	b := newBarrier(t, s, root+"/barrier")
	require.NoError(t, b.Set(bg()))

	for _, p := range []string{root + "/sem", root + "/sem/leases", leases[0].Node(), root + "/barrier", root} {
		before, _, err := admin.Get(p)
		require.NoError(t, err)
		err = locks.Revoke(bg(), s, p)
		assert.ErrorIs(t, err, locks.ErrNotRevocable, p)
		after, _, err := admin.Get(p)
		require.NoError(t, err)
		assert.Equal(t, string(before), string(after), "Revoke changed %s", p)
	}
	for _, p := range []string{root + "/sem/bogus", root + "/lock/_c_0b9a4f1e-6c1d-4d5e-9f00-1a2b3c4d5e6f-lock-0000000007"} {
		err := locks.Revoke(bg(), s, p)
		assert.ErrorIs(t, err, locks.ErrNotRevocable, p)
		ok, _, err := admin.Exists(p)
		require.NoError(t, err)
		assert.False(t, ok, "Revoke created %s", p)
	}
	err = locks.Revoke(bg(), s, root+"/lock/_c_0b9a4f1e-6c1d-4d5e-9f00-1a2b3c4d5e6f-lock-0000000007")
	assert.ErrorIs(t, err, zk.ErrNoNode, "a lock node that is gone says so")

	require.NoError(t, leases[0].Release(bg()))
	require.NoError(t, b.Remove(bg()))
}

// lockBeforeDeadline takes the free lock m with a deadline that ends soon
// after, and returns the hold and that deadline's context. The deadline
// starts at 200 ms and doubles each time the acquire does not beat it (an
// uncontended Lock is a few round trips, which a loaded machine can stretch
// past any fixed bound): what is awaited is an acquire made in time, not a
// speed.
func lockBeforeDeadline(t *testing.T, m *locks.Mutex, parent context.Context) (*locks.Hold, context.Context) {
	t.Helper()
	for d := 200 * time.Millisecond; ; d *= 2 {
		require.Less(t, d, waitLong, "no acquire of a free lock within its deadline")
		wait, cancel := context.WithTimeout(parent, d)
		t.Cleanup(cancel)
		h, err := m.Lock(wait)
		if err == nil {
			return h, wait
		}
		require.ErrorIs(t, err, context.DeadlineExceeded)
	}
}
