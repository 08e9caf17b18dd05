package integration_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/barriers"
	"github.com/zkrecipes/recipes/locks"
)

var errGaveUp = errors.New("test: gave up before asking")

// ended returns a context that has already ended, with errGaveUp as cause.
func ended() context.Context {
	ctx, cancel := context.WithCancelCause(bg())
	cancel(errGaveUp)
	return ctx
}

// everyRecipe is one of each recipe, on a session, at paths under root.
type everyRecipe struct {
	m   *locks.Mutex
	rw  *locks.RWMutex
	sem *locks.Semaphore // of 2
	sm  *locks.SemaphoreMutex
	ml  *locks.MultiLock
	b   *barriers.Barrier
	db  *barriers.DoubleBarrier // of 1
}

func newEveryRecipe(t *testing.T, s *recipes.Session, root string) everyRecipe {
	t.Helper()
	sm, err := locks.NewSemaphoreMutex(s, root+"/sm")
	require.NoError(t, err)
	ml, err := locks.NewMultiMutex(s, []string{root + "/a", root + "/b"})
	require.NoError(t, err)
	return everyRecipe{
		m:   newMutex(t, s, root+"/mutex"),
		rw:  newRWMutex(t, s, root+"/rw"),
		sem: newSemaphore(t, s, root+"/sem", 2),
		sm:  sm,
		ml:  ml,
		b:   newBarrier(t, s, root+"/barrier"),
		db:  newDoubleBarrier(t, s, root+"/double", 1),
	}
}

// TestEndedContextTakesNothing: every acquire given a context that has
// already ended returns the context's cause and creates nothing, not even
// a container parent.
func TestEndedContextTakesNothing(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	r := newEveryRecipe(t, connect(t), root)
	m, rw, sem, sm, ml, b, db := r.m, r.rw, r.sem, r.sm, r.ml, r.b, r.db

	lock := func(l func(context.Context) (*locks.Hold, error)) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := l(ctx)
			return err
		}
	}
	try := func(l func(context.Context) (*locks.Hold, bool, error)) func(context.Context) error {
		return func(ctx context.Context) error {
			_, ok, err := l(ctx)
			assert.False(t, ok)
			return err
		}
	}
	for _, c := range []struct {
		name string
		op   func(context.Context) error
	}{
		{"Mutex.Lock", lock(m.Lock)},
		{"Mutex.TryLock", try(m.TryLock)},
		{"RWMutex.Lock", lock(rw.Lock)},
		{"RWMutex.RLock", lock(rw.RLock)},
		{"RWMutex.TryRLock", try(rw.TryRLock)},
		{"Semaphore.Acquire", func(ctx context.Context) error { _, err := sem.Acquire(ctx, 1); return err }},
		{"Semaphore.TryAcquire", func(ctx context.Context) error { _, _, err := sem.TryAcquire(ctx, 1); return err }},
		{"SemaphoreMutex.Lock", lock(sm.Lock)},
		{"MultiLock.Lock", lock(ml.Lock)},
		{"Barrier.Set", b.Set},
		{"Barrier.Wait", b.Wait}, // not up: a live context would pass at once
		{"DoubleBarrier.Enter", db.Enter},
	} {
		err := c.op(ended())
		assert.ErrorIs(t, err, errGaveUp, c.name)
		assert.ErrorIs(t, err, context.Canceled, c.name)
		ok, _, err := admin.Exists(root)
		require.NoError(t, err)
		require.False(t, ok, "%s created %s", c.name, root)
	}

	// A barrier that is up stays up.
	require.NoError(t, b.Set(bg()))
	err := b.Remove(ended())
	assert.ErrorIs(t, err, errGaveUp)
	assert.ErrorIs(t, err, context.Canceled)
	up, err := b.IsSet(bg())
	require.NoError(t, err)
	assert.True(t, up, "Barrier.Remove with an ended context took the barrier down")
	require.NoError(t, b.Remove(bg()))
}

// TestEndedContextDoesNotReenter: a nested Lock with a hold's context that
// has ended (a context derived from it cancelled, or the lock released)
// fails with the context's cause, and counts no extra Lock.
func TestEndedContextDoesNotReenter(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/mutex"
	m := newMutex(t, connect(t), path)
	h, err := m.Lock(bg())
	require.NoError(t, err)
	nested, cancel := context.WithCancelCause(h.Context())
	cancel(errGaveUp)
	_, err = m.Lock(nested)
	assert.ErrorIs(t, err, errGaveUp, "re-entered with an ended context")
	_, _, err = m.TryLock(nested)
	assert.ErrorIs(t, err, errGaveUp)
	require.NoError(t, h.Release(bg()), "the one Lock is undone by one Release")
	assert.Empty(t, children(t, admin, path))

	h, err = m.Lock(bg())
	require.NoError(t, err)
	require.NoError(t, h.Release(bg()))
	_, err = m.Lock(h.Context())
	assert.ErrorIs(t, err, locks.ErrReleased, "re-entered a released hold")
	assert.Empty(t, children(t, admin, path))
}
