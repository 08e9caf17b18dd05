package integration_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/testenv/curatortest"
	"github.com/zkrecipes/recipes/internal/testenv/curatortest/eventlog"
	"github.com/zkrecipes/recipes/locks"
	"github.com/zkrecipes/recipes/zktest"
)

// TestSharedCountSemaphoreWithCurator: a Go semaphore and Curator's
// InterProcessSemaphoreV2 read one shared count. With the count at 1 and a
// Java holder in, a Go acquirer waits; raising the count to 2 lets it in
// while the Java holder still holds; lowering it to 1 keeps a second Go
// acquirer out until the count is raised again.
func TestSharedCountSemaphoreWithCurator(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	path, countPath := root+"/sem", root+"/count"
	s := connect(t)
	require.NoError(t, locks.SetSharedCount(bg(), s, countPath, 1))
	log := filepath.Join(t.TempDir(), "events")
	javaDone, _ := interopJava(t, curatortest.EnsureT(t), "semaphore-count",
		curatortest.ServersArg(zktest.Servers(t)), path, countPath, "1", "4000", log, curatortest.ClientID(0))
	interopLogged(t, log, curatortest.ClientID(0))

	sem, err := locks.NewSharedCountSemaphore(s, path, countPath)
	require.NoError(t, err)
	noLeaseFor(t, sem, "a second lease with the count at 1")

	first := inOnceRaised(t, sem, s, countPath)
	events, err := eventlog.Read(log)
	require.NoError(t, err)
	require.False(t, slices.ContainsFunc(events, func(e eventlog.Event) bool { return e.Op == eventlog.Leave }),
		"the Java holder left before the count was raised")
	assert.Equal(t, 2, sem.MaxLeases())
	require.NoError(t, <-javaDone)

	require.NoError(t, locks.SetSharedCount(bg(), s, countPath, 1))
	other, err := locks.NewSharedCountSemaphore(connect(t), path, countPath)
	require.NoError(t, err)
	noLeaseFor(t, other, "the count was lowered to 1 and a lease is held")
	second := inOnceRaised(t, other, s, countPath)
	require.NoError(t, first.Release(bg()))
	require.NoError(t, second.Release(bg()))
	require.NoError(t, connect(t).Delete(bg(), countPath))
}

// inOnceRaised starts an Acquire of one lease of sem, raises the count at
// countPath to 2, and returns the lease the Acquire then gets.
func inOnceRaised(t *testing.T, sem *locks.Semaphore, s *recipes.Session, countPath string) *locks.Hold {
	t.Helper()
	got := make(chan *locks.Hold, 1)
	go func() {
		ls, err := sem.Acquire(bg(), 1)
		if assert.NoError(t, err) {
			got <- ls[0]
		} else {
			got <- nil
		}
	}()
	require.NoError(t, locks.SetSharedCount(bg(), s, countPath, 2))
	h := <-got
	require.NotNil(t, h)
	return h
}

// noLeaseFor asserts that sem hands out no lease within 300 ms.
func noLeaseFor(t *testing.T, sem *locks.Semaphore, why string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(bg(), 300*time.Millisecond)
	defer cancel()
	_, err := sem.Acquire(ctx, 1)
	require.ErrorIs(t, err, context.DeadlineExceeded, why)
}

// TestSharedCountBadInput: bad paths and counts are refused, and a missing
// count node is an error naming it.
func TestSharedCountBadInput(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	s := connect(t)
	_, err := locks.NewSharedCountSemaphore(s, root+"/sem", "relative")
	assert.ErrorIs(t, err, recipes.ErrInvalid)
	assert.ErrorIs(t, locks.SetSharedCount(bg(), s, "", 1), recipes.ErrInvalid)
	if pastJavaInt != 0 {
		assert.ErrorIs(t, locks.SetSharedCount(bg(), s, root+"/count", pastJavaInt), recipes.ErrInvalid)
	}
	_, err = locks.NewSharedCountSemaphore(s, root+"/sem", root+"/sem/count")
	assert.ErrorIs(t, err, recipes.ErrInvalid, "a count inside the semaphore's path")
	_, err = s.Conn().CreateContainer(root, nil, zk.FlagContainer, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	_, err = s.Conn().Create(root+"/data", []byte("not a count"), 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	assert.ErrorIs(t, locks.SetSharedCount(bg(), s, root+"/data", 1), recipes.ErrInvalid)
	require.NoError(t, s.Conn().Delete(root+"/data", -1))
	sem, err := locks.NewSharedCountSemaphore(s, root+"/sem", root+"/missing")
	require.NoError(t, err)
	_, err = sem.Acquire(bg(), 1)
	assert.ErrorIs(t, err, locks.ErrNoSharedCount)
	assert.ErrorIs(t, err, zk.ErrNoNode)
	assert.ErrorContains(t, err, "shared count does not exist: "+root+"/missing")
}
