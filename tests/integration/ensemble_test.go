package integration_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/locks"
	"github.com/zkrecipes/recipes/zktest"
)

// TestMutexSurvivesLeaderRestart restarts the ensemble's leader while one
// client holds the lock and another waits: sessions move to other servers,
// the hold is never lost, and the waiter gets the lock once it is released.
func TestMutexSurvivesLeaderRestart(t *testing.T) {
	e := zktest.StartEnsemble(t, 3)
	admin := zktest.Connect(t, e.Servers())
	path := zktest.Root(t, admin) + "/lock"
	// Long enough to ride out an election.
	long := recipes.WithSessionTimeout(10 * time.Second)
	holder := newMutex(t, connectTo(t, e.Servers(), long), path)
	waiter := newMutex(t, connectTo(t, e.Servers(), long), path)
	held, err := holder.Lock(bg())
	require.NoError(t, err)
	got := lockAndUnlock(waiter, nil)
	waitQueued(t, admin, path, 2)

	require.NoError(t, e.Restart(e.Leader()))
	require.NoError(t, e.WaitQuorum())
	assert.NoError(t, held.Err(), "the hold was lost across a leader restart")
	select {
	case err := <-got:
		t.Fatalf("the waiter finished while the lock was held: %v", err)
	default:
	}
	require.NoError(t, held.Release(bg()))
	require.NoError(t, <-got)
}

// TestMutexQuorumLoss stops two of three servers while a client holds the
// lock: with no quorum the session cannot be kept, so the holder must be told
// within the session timeout. Once the quorum is back, the lock can be taken
// again.
func TestMutexQuorumLoss(t *testing.T) {
	e := zktest.StartEnsemble(t, 3)
	admin := zktest.Connect(t, e.Servers())
	path := zktest.Root(t, admin) + "/lock"
	s := connectTo(t, e.Servers(), recipes.WithSessionTimeout(testSessionTimeout))
	m := newMutex(t, s, path)
	held, err := m.Lock(bg())
	require.NoError(t, err)

	stopped := time.Now()
	require.NoError(t, e.Stop(0))
	require.NoError(t, e.Stop(1))
	select {
	case <-held.Done():
	case <-time.After(waitLong):
		t.Fatal("the holder was never told")
	}
	assert.Less(t, time.Since(stopped), testSessionTimeout+time.Second, "told too late")
	assert.ErrorIs(t, held.Err(), locks.ErrLockLost)
	assert.ErrorIs(t, held.Err(), recipes.ErrSessionLost)
	assert.Equal(t, recipes.StateLost, s.State())
	assert.ErrorIs(t, held.Release(bg()), locks.ErrLockLost)

	require.NoError(t, e.Start(0))
	require.NoError(t, e.Start(1))
	require.NoError(t, e.WaitQuorum())
	again := newMutex(t, connectTo(t, e.Servers()), path)
	ctx, cancel := context.WithTimeout(bg(), waitLong)
	defer cancel()
	h, err := again.Lock(ctx)
	require.NoError(t, err, "the lock was not free after the old session expired")
	require.NoError(t, h.Release(bg()))
}
