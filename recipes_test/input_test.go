package recipes_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

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
		assert.ErrorIs(t, err, locks.ErrInvalid, "%T", nilMember)
		assert.Nil(t, ml)
	}
}
