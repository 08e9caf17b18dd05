package integration_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes/locks"
	"github.com/zkrecipes/recipes/zktest"
)

// TestHoldSession: a hold names the session it is held in, a lease and a
// multi-lock's in one session too; a multi-lock over two sessions has
// none, and each member names its own. Expiring the session a hold names
// loses the hold.
func TestHoldSession(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	s1, s2 := connect(t), connect(t)

	sem, err := locks.NewSemaphore(s1, root+"/sem", 2)
	require.NoError(t, err)
	leases, err := sem.Acquire(bg(), 1)
	require.NoError(t, err)
	assert.Same(t, s1, leases[0].Session(), "a lease's session")
	require.NoError(t, leases[0].Release(bg()))

	one, err := locks.NewMultiMutex(s1, []string{root + "/a", root + "/b"})
	require.NoError(t, err)
	h, err := one.Lock(bg())
	require.NoError(t, err)
	assert.Same(t, s1, h.Session(), "a multi-lock's in one session")
	require.NoError(t, h.Release(bg()))

	two, err := locks.NewMultiLock(newMutex(t, s1, root+"/a"), newMutex(t, s2, root+"/b"))
	require.NoError(t, err)
	h, err = two.Lock(bg())
	require.NoError(t, err)
	assert.Nil(t, h.Session(), "a multi-lock's over two sessions")
	members := h.Members()
	require.Len(t, members, 2)
	assert.Same(t, s1, members[0].Session(), "member %s", members[0].Path())
	assert.Same(t, s2, members[1].Session(), "member %s", members[1].Path())
	require.NoError(t, h.Release(bg()))

	held, err := newMutex(t, s2, root+"/c").Lock(bg())
	require.NoError(t, err)
	zktest.ExpireSession(t, held.Session().ID())
	<-held.Done()
	assert.ErrorIs(t, held.Err(), locks.ErrLockLost)
	assert.ErrorIs(t, held.Release(bg()), locks.ErrLockLost)
}
