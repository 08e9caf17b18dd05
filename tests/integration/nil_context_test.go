package integration_test

import (
	"context"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/barriers"
	"github.com/zkrecipes/recipes/locks"
	"github.com/zkrecipes/recipes/zktest"
)

// noCtx is a nil context, as a caller's variable may be (a literal nil is
// what vet's and staticcheck's SA1012 catch).
var noCtx context.Context

// assertNilContextRefused checks err is the refusal of a nil context by call.
func assertNilContextRefused(t *testing.T, err error, call string) {
	t.Helper()
	assert.ErrorIs(t, err, recipes.ErrInvalid, call)
	assert.ErrorContains(t, err, call+": nil context", call)
}

// TestNilContextIsRefused: every public call that takes a context refuses a
// nil one with ErrInvalid, naming the call, before it sends or changes
// anything (it used to panic, deep inside).
func TestNilContextIsRefused(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	s := connect(t)
	r := newEveryRecipe(t, s, root)
	m, rw, sem, sm, ml, b, db := r.m, r.rw, r.sem, r.sm, r.ml, r.b, r.db
	shared, err := locks.NewSharedCountSemaphore(s, root+"/shared", root+"/count")
	require.NoError(t, err)

	called := false
	for _, c := range []struct {
		call string
		op   func() error
	}{
		{"locks: Mutex.Lock", func() error { _, err := m.Lock(noCtx); return err }},
		{"locks: Mutex.TryLock", func() error { _, _, err := m.TryLock(noCtx); return err }},
		{"locks: Mutex.Participants", func() error { _, err := m.Participants(noCtx); return err }},
		{"locks: RWMutex.Lock", func() error { _, err := rw.Lock(noCtx); return err }},
		{"locks: RWMutex.TryLock", func() error { _, _, err := rw.TryLock(noCtx); return err }},
		{"locks: RWMutex.RLock", func() error { _, err := rw.RLock(noCtx); return err }},
		{"locks: RWMutex.TryRLock", func() error { _, _, err := rw.TryRLock(noCtx); return err }},
		{"locks: RWMutex.Participants", func() error { _, err := rw.Participants(noCtx); return err }},
		{"locks: Semaphore.Acquire", func() error { _, err := sem.Acquire(noCtx, 1); return err }},
		{"locks: Semaphore.TryAcquire", func() error { _, _, err := sem.TryAcquire(noCtx, 1); return err }},
		{"locks: Semaphore.Participants", func() error { _, err := sem.Participants(noCtx); return err }},
		{"locks: Semaphore.Acquire", func() error { _, err := shared.Acquire(noCtx, 1); return err }},
		{"locks: SemaphoreMutex.Lock", func() error { _, err := sm.Lock(noCtx); return err }},
		{"locks: SemaphoreMutex.TryLock", func() error { _, _, err := sm.TryLock(noCtx); return err }},
		{"locks: SemaphoreMutex.Participants", func() error { _, err := sm.Participants(noCtx); return err }},
		{"locks: MultiLock.Lock", func() error { _, err := ml.Lock(noCtx); return err }},
		{"locks: Inspect", func() error { _, err := locks.Inspect(noCtx, s, root+"/mutex"); return err }},
		{"locks: Revoke", func() error { return locks.Revoke(noCtx, s, root+"/mutex/x") }},
		{"locks: SetSharedCount", func() error { return locks.SetSharedCount(noCtx, s, root+"/count", 1) }},
		{"barriers: Barrier.Set", func() error { return b.Set(noCtx) }},
		{"barriers: Barrier.Remove", func() error { return b.Remove(noCtx) }},
		{"barriers: Barrier.Wait", func() error { return b.Wait(noCtx) }},
		{"barriers: Barrier.IsSet", func() error { _, err := b.IsSet(noCtx); return err }},
		{"barriers: DoubleBarrier.Enter", func() error { return db.Enter(noCtx) }},
		{"barriers: DoubleBarrier.Leave", func() error { return db.Leave(noCtx) }},
		{"barriers: DoubleBarrier.Arrived", func() error { _, _, err := db.Arrived(noCtx); return err }},
		{"barriers: Inspect", func() error { _, err := barriers.Inspect(noCtx, s, root+"/double"); return err }},
		{"recipes: Session.Retry", func() error {
			return s.Retry(noCtx, func(*zk.Conn) error { called = true; return nil })
		}},
		{"recipes: Session.Delete", func() error { return s.Delete(noCtx, root) }},
		{"recipes: Session.WaitConnected", func() error { return s.WaitConnected(noCtx) }},
		{"recipes: Connect", func() error { _, err := recipes.Connect(noCtx, zktest.Servers(t)); return err }},
		{"recipes: NewSession", func() error {
			conn, events, err := zk.Connect(zktest.Servers(t), testSessionTimeout, zk.WithLogInfo(false))
			require.NoError(t, err)
			defer conn.Close()
			_, err = recipes.NewSession(noCtx, conn, events)
			return err
		}},
	} {
		assertNilContextRefused(t, c.op(), c.call)
		ok, _, err := admin.Exists(root)
		require.NoError(t, err)
		require.False(t, ok, "%s created %s", c.call, root)
	}
	assert.False(t, called, "Retry ran its operation")
}

// TestNilContextReleaseKeepsTheHold: Release(nil) is refused and changes
// nothing: the lock is still held, its node still there, and a Release with
// a context releases it. (A recovered panic used to leave the node, and the
// lock, stuck until the session ended.) So for a lease, a multi-lock and a
// double barrier's Leave.
func TestNilContextReleaseKeepsTheHold(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	s := connect(t)
	m := newMutex(t, s, root+"/mutex")
	sem := newSemaphore(t, s, root+"/sem", 1)
	ml, err := locks.NewMultiMutex(s, []string{root + "/a", root + "/b"})
	require.NoError(t, err)

	h, err := m.Lock(bg())
	require.NoError(t, err)
	leases, err := sem.Acquire(bg(), 1)
	require.NoError(t, err)
	multi, err := ml.Lock(bg())
	require.NoError(t, err)
	for _, h := range []*locks.Hold{h, leases[0], multi} {
		assertNilContextRefused(t, h.Release(noCtx), "locks: Hold.Release")
		assert.NoError(t, h.Err(), "%s: refused Release let go", h.Path())
		_, err := h.Multi(noCtx)
		assertNilContextRefused(t, err, "locks: Hold.Multi")
	}
	assert.Len(t, children(t, admin, root+"/mutex"), 1)
	assert.Len(t, children(t, admin, root+"/sem/leases"), 1)
	assert.Len(t, children(t, admin, root+"/a"), 1)
	_, ok, err := newMutex(t, connect(t), root+"/mutex").TryLock(bg())
	require.NoError(t, err)
	assert.False(t, ok, "a refused Release let the mutex go")
	for _, h := range []*locks.Hold{h, leases[0], multi} {
		require.NoError(t, h.Release(bg()))
	}
	assert.Empty(t, children(t, admin, root+"/mutex"))

	db := newDoubleBarrier(t, s, root+"/double", 1)
	require.NoError(t, db.Enter(bg()))
	assertNilContextRefused(t, db.Leave(noCtx), "barriers: DoubleBarrier.Leave")
	assert.Len(t, children(t, admin, root+"/double"), 2, "a member and ready")
	require.NoError(t, db.Leave(bg()))
	assert.Empty(t, children(t, admin, root+"/double"))
}
