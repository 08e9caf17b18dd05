package integration_test

import (
	"context"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/zktest"
)

// TestBarrierWaitOnALockPathFails: a path a lock uses is no barrier (its node
// goes only when the lock's container is reaped), so Wait says whose it is,
// with ErrOtherRecipe, as Set and Remove do, instead of waiting. A
// semaphore's and a double barrier's paths alike.
func TestBarrierWaitOnALockPathFails(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	path := root + "/p"
	held, err := newMutex(t, connect(t), path).Lock(bg())
	require.NoError(t, err)
	defer func() { require.NoError(t, held.Release(bg())) }()

	b := newBarrier(t, connect(t), path)
	// Bounded only so that a Wait that waits fails the test instead of
	// hanging it: it must return at once.
	ctx, cancel := context.WithTimeout(bg(), waitLong)
	defer cancel()
	err = b.Wait(ctx)
	require.ErrorIs(t, err, recipes.ErrOtherRecipe)
	assert.Contains(t, err.Error(), "mutex's node")

	sem := root + "/sem"
	lease, err := newSemaphore(t, connect(t), sem, 1).Acquire(bg(), 1)
	require.NoError(t, err)
	defer func() { require.NoError(t, lease[0].Release(bg())) }()
	err = newBarrier(t, connect(t), sem).Wait(ctx)
	require.ErrorIs(t, err, recipes.ErrOtherRecipe)
}

// TestBarrierWaitOnCuratorsLayout: Curator's DistributedBarrier is one node
// at the path, with its data and no children; Wait waits for it to go, as
// before.
func TestBarrierWaitOnCuratorsLayout(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/gate"
	_, err := admin.CreateContainer(root, nil, zk.FlagContainer, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	_, err = admin.Create(path, []byte("10.0.0.7"), 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	done := make(chan error, 1)
	b := newBarrier(t, connect(t), path)
	go func() { done <- b.Wait(bg()) }()
	eventually(t, "the waiter to watch the barrier", func() bool {
		out := wchp(t, zktest.Servers(t)[0])
		return countLines(out, path) >= 1
	})
	select {
	case err := <-done:
		t.Fatalf("the waiter passed a standing barrier: %v", err)
	default:
	}
	require.NoError(t, admin.Delete(path, -1))
	require.NoError(t, <-done)
}
