package integration_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/barriers"
	"github.com/zkrecipes/recipes/locks"
)

// TestMultiLockRefusesNilMembers: a typed nil (a nil *Mutex in a Locker) is
// refused by the constructor, not left to panic in Lock.
func TestMultiLockRefusesNilMembers(t *testing.T) {
	t.Parallel()
	s := connect(t)
	m := newMutex(t, s, "/a")
	for _, nilMember := range []locks.Locker{(*locks.Mutex)(nil), (*locks.RWMutex)(nil), (*locks.SemaphoreMutex)(nil), (*locks.MultiLock)(nil)} {
		ml, err := locks.NewMultiLock(m, nilMember)
		assert.ErrorIs(t, err, recipes.ErrInvalid, "%T", nilMember)
		assert.Nil(t, ml)
	}
}

// TestWithDataIsCopied: a caller that reuses its buffer after making a
// recipe does not change what the recipe writes.
func TestWithDataIsCopied(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	s := connect(t)
	buf := []byte{1, 2, 3, 4}
	rw, err := locks.NewRWMutex(s, root+"/rw", recipes.WithData(buf))
	require.NoError(t, err)
	b, err := barriers.NewBarrier(s, root+"/barrier", recipes.WithData(buf))
	require.NoError(t, err)
	buf[0] = 5

	held, err := rw.Lock(bg())
	require.NoError(t, err)
	ps, err := rw.Participants(bg())
	require.NoError(t, err)
	_, writers := byKind(ps)
	require.Len(t, writers, 1)
	assert.Equal(t, []byte{1, 2, 3, 4}, writers[0].Data, "the lock node")
	require.NoError(t, held.Release(bg()))

	require.NoError(t, b.Set(bg()))
	data, _, err := admin.Get(root + "/barrier")
	require.NoError(t, err)
	assert.Equal(t, []byte{1, 2, 3, 4}, data, "the barrier node")
	require.NoError(t, b.Remove(bg()))
}
