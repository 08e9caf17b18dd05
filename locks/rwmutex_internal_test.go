package locks

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/zktest"
)

// TestWriteHoldUnmarkedOnlyBeforeItsRelease: a downgrade drops the write
// hold's own mark before it puts a read node at the write node's place, so
// that the writer behind does not take the write release for the end of
// every hold ahead of it. Once Release has begun its delete may have taken
// the mark already: the hold refuses, and RLock then queues as an ordinary
// read lock instead of downgrading.
func TestWriteHoldUnmarkedOnlyBeforeItsRelease(t *testing.T) {
	servers := zktest.Servers(t)
	root := zktest.Root(t, zktest.Connect(t, servers))
	ctx := context.Background()
	sess, err := recipes.Connect(ctx, servers)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sess.Close() })
	rw, err := NewRWMutex(sess, root+"/rw")
	require.NoError(t, err)

	w, err := rw.Lock(ctx)
	require.NoError(t, err)
	require.True(t, w.turn().Unmarked(), "a write hold not yet released")
	require.NoError(t, w.Release(ctx))
	require.False(t, w.turn().Unmarked(), "a write hold whose release has begun")
}
