package recipes_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes/locks"
)

func TestMutexParticipantsDataAndDefault(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/lock"
	a := newMutex(t, connect(t), path)
	b := newMutex(t, connect(t), path, locks.WithData([]byte("worker-b")))

	held, err := a.Lock(bg())
	require.NoError(t, err)
	done := lockAndUnlock(b, nil)
	waitQueued(t, admin, path, 2)

	ps, err := b.Participants(bg())
	require.NoError(t, err)
	require.Len(t, ps, 2)
	assert.Equal(t, string(locks.DefaultData()), string(ps[0].Data), "holder first, with default data")
	assert.Equal(t, "worker-b", string(ps[1].Data))
	token, err := a.Token(held)
	require.NoError(t, err)
	assert.Equal(t, token, ps[0].Token)
	assert.True(t, strings.HasPrefix(ps[0].Path, path+"/_c_"), ps[0].Path)
	assert.WithinDuration(t, time.Now(), ps[0].Created, time.Minute)

	require.NoError(t, a.Unlock(held))
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
		token, err := m.Token(held)
		require.NoError(t, err)
		assert.Greater(t, token, last)
		last = token
		require.NoError(t, m.Unlock(held))
	}

	held, err := m.Lock(bg())
	require.NoError(t, err)
	data := root + "/data"
	_, err = m.Multi(held, &zk.CreateRequest{Path: data, Acl: zk.WorldACL(zk.PermAll)})
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
	assert.ErrorIs(t, context.Cause(held), locks.ErrLockLost)
	_, err = m.Multi(held, &zk.DeleteRequest{Path: data, Version: -1})
	assert.ErrorIs(t, err, locks.ErrLockLost)
	ok, _, err = admin.Exists(data)
	require.NoError(t, err)
	assert.True(t, ok, "multi applied after the lock was lost")
	assert.ErrorIs(t, m.Unlock(held), locks.ErrLockLost)
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
		<-holder.Revoked(held)
		released <- holder.Unlock(held)
	}()
	other := newMutex(t, connect(t), path)
	ps, err := other.Participants(bg())
	require.NoError(t, err)
	require.Len(t, ps, 1)
	require.NoError(t, locks.Revoke(bg(), s, ps[0].Path))
	require.NoError(t, <-released)

	ctx, cancel := context.WithTimeout(bg(), 5*time.Second)
	defer cancel()
	h2, err := other.Lock(ctx)
	require.NoError(t, err)
	require.NoError(t, other.Unlock(h2))
	err = locks.Revoke(bg(), s, ps[0].Path)
	assert.ErrorIs(t, err, locks.ErrNotRevocable, "a gone node has nothing to revoke")
	assert.ErrorIs(t, err, zk.ErrNoNode)
	assert.Nil(t, holder.Revoked(bg()))
}

func TestMutexHeldContextFollowsParent(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	m := newMutex(t, connect(t), root+"/lock")
	parent, cancel := context.WithCancel(bg())
	held, err := m.Lock(parent)
	require.NoError(t, err)
	cancel()
	<-held.Done()
	assert.False(t, errors.Is(context.Cause(held), locks.ErrLockLost), "parent cancellation is not loss")
	// The lock is still held until Unlock, and Unlock works on the
	// cancelled context.
	_, err = m.Token(held)
	require.NoError(t, err)
	require.NoError(t, m.Unlock(held))
}

// TestUnlockAfterLossEndsWithLoss: the holder's node is deleted by someone
// else and the holder unlocks before its watch tells it. Unlock reports the
// loss, and the held context ends with it, not with ErrReleased; the same
// for a semaphore's lease.
func TestUnlockAfterLossEndsWithLoss(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	s := connect(t)
	m := newMutex(t, s, root+"/lock")
	held, err := m.Lock(bg())
	require.NoError(t, err)
	ps, err := m.Participants(bg())
	require.NoError(t, err)
	require.Len(t, ps, 1)
	require.NoError(t, admin.Delete(ps[0].Path, -1))
	err = m.Unlock(held)
	assert.ErrorIs(t, err, locks.ErrLockLost, "Unlock")
	assert.ErrorIs(t, context.Cause(held), locks.ErrLockLost, "the held context")

	sem := newSemaphore(t, s, root+"/sem", 1)
	leases, err := sem.Acquire(bg(), 1)
	require.NoError(t, err)
	require.NoError(t, admin.Delete(leases[0].Node(), -1))
	assert.ErrorIs(t, leases[0].Release(bg()), locks.ErrLockLost, "Lease.Release")
	assert.ErrorIs(t, leases[0].Err(), locks.ErrLockLost, "Lease.Err")
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
