package integration_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/locks"
	"github.com/zkrecipes/recipes/zktest"
)

// TestMultiLockTakesFreeMembersAtOnce: a multi-lock of 1, 2, 4 or 8 free
// members sends every member's create and listing before any reply comes
// back, so it is held after one round trip, and its release sends every
// member's delete at once. Shown with the replies held at the proxy, which
// does not depend on how fast the machine is; an acquisition and its
// release send 3 requests a member. Its own server reaps empty containers
// once a minute, as ZooKeeper does by default, so that the members'
// directories stay between acquisitions.
func TestMultiLockTakesFreeMembersAtOnce(t *testing.T) {
	t.Parallel()
	srv, admin, root := newOwnRoot(t, zktest.WithSystemProperty("znode.container.checkIntervalMs", "60000"))
	p, err := testenv.NewProxy(srv.Servers()[0])
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	s := connectTo(t, srv.Servers(), recipes.WithDialer(p.Dialer))
	// This server reaps empty containers a minute later, after the test:
	// delete them here, before Root looks for leftovers (cleanups run last
	// in, first out: the members' directories, then the root).
	t.Cleanup(func() {
		if err := admin.Delete(root, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			t.Errorf("delete %s: %v", root, err)
		}
	})
	for _, n := range []int{1, 2, 4, 8} {
		var paths []string
		for i := range n {
			paths = append(paths, fmt.Sprintf("%s/m%d-%d", root, n, i))
		}
		t.Cleanup(func() {
			for _, dir := range paths {
				if err := admin.Delete(dir, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
					t.Errorf("delete %s: %v", dir, err)
				}
			}
		})
		ml, err := locks.NewMultiMutex(s, paths)
		require.NoError(t, err)
		ours := func(path string) bool { return strings.HasPrefix(path, fmt.Sprintf("%s/m%d-", root, n)) }
		// The first acquisition makes the directories.
		h, err := ml.Lock(bg())
		require.NoError(t, err)
		require.NoError(t, h.Release(bg()))

		listings := p.Counter(func(op int32, path string) bool { return op == testenv.OpGetChildren2 && ours(path) })
		p.StallDown()
		held := make(chan *locks.Hold, 1)
		go func() {
			h, err := ml.Lock(bg())
			if err != nil {
				t.Errorf("%d members: %v", n, err)
			}
			held <- h
		}()
		eventually(t, fmt.Sprintf("%d members' listings sent with every reply held", n), func() bool { return listings() == int64(n) })
		p.Restore()
		h = <-held
		require.NotNil(t, h)
		requireTokens(t, h, fmt.Sprintf("%d members", n))

		deletes := p.Counter(func(op int32, path string) bool {
			return (op == testenv.OpDelete || op == testenv.OpMulti) && ours(path)
		})
		p.StallDown()
		released := make(chan error, 1)
		go func() { released <- h.Release(bg()) }()
		eventually(t, fmt.Sprintf("%d members' deletes sent with every reply held", n), func() bool { return deletes() == int64(n) })
		p.Restore()
		require.NoError(t, <-released)

		before := p.Traffic()
		for range freeOps {
			h, err := ml.Lock(bg())
			require.NoError(t, err)
			require.NoError(t, h.Release(bg()))
		}
		got := p.Traffic().Sub(before)
		t.Logf("%d members: %d round trips, %d requests for %d acquisitions and releases", n, got.RoundTrips, got.Requests, freeOps)
		// The session's keep-alive probe may add a request now and then.
		require.LessOrEqual(t, got.Requests, int64(3*n*freeOps+2), "%d members: requests", n)
	}
}

// TestMultiLockKeepsItsPlaceOnABusyMember: a multi-lock that finds a
// member busy waits in that member's line with the one node it created
// there, so a process that queues on the member after it comes after it.
func TestMultiLockKeepsItsPlaceOnABusyMember(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	a, b := root+"/a", root+"/b"
	holder := newMutex(t, connect(t), b)
	first, err := holder.Lock(bg())
	require.NoError(t, err)

	p, err := testenv.NewProxy(zktest.Servers(t)[0])
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	creates := p.Counter(func(op int32, path string) bool {
		return (op == testenv.OpCreate || op == testenv.OpCreate2) && strings.HasPrefix(path, b+"/")
	})
	ml, err := locks.NewMultiMutex(connectTo(t, zktest.Servers(t), recipes.WithDialer(p.Dialer)), []string{b, a})
	require.NoError(t, err)
	mlQueued := make(chan struct{})
	mlHeld := make(chan *locks.Hold, 1)
	go func() {
		h, err := ml.Lock(locks.WithQueued(bg(), func() { close(mlQueued) }))
		if err != nil {
			t.Errorf("multi-lock: %v", err)
		}
		mlHeld <- h
	}()
	<-mlQueued
	ps, err := holder.Participants(bg())
	require.NoError(t, err)
	require.Len(t, ps, 2, "the holder, then the multi-lock")
	queuedAt := ps[1].Path

	later := newMutex(t, connect(t), b)
	laterQueued := make(chan struct{})
	laterHeld := make(chan *locks.Hold, 1)
	go func() {
		h, err := later.Lock(locks.WithQueued(bg(), func() { close(laterQueued) }))
		if err != nil {
			t.Errorf("later mutex: %v", err)
		}
		laterHeld <- h
	}()
	<-laterQueued

	require.NoError(t, first.Release(bg()))
	h := <-mlHeld
	require.NotNil(t, h)
	assert.Equal(t, queuedAt, h.Members()[1].Node(), "the multi-lock holds b with the node it queued")
	assert.EqualValues(t, 1, creates(), "the multi-lock created one node on b")
	select {
	case <-laterHeld:
		t.Fatal("the mutex that queued after the multi-lock took b first")
	default:
	}
	require.NoError(t, h.Release(bg()))
	h = <-laterHeld
	require.NotNil(t, h)
	require.NoError(t, h.Release(bg()))
}

// TestMultiLockWithdrawsMembersAfterABusyOne: a multi-lock over a, b and c
// that finds b busy waits for b holding a, the member before it, and
// nothing after it: c's node, made in the same round trip, is deleted. When
// b comes free, it holds all three.
func TestMultiLockWithdrawsMembersAfterABusyOne(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	a, b, c := root+"/a", root+"/b", root+"/c"
	holder := newMutex(t, connect(t), b)
	first, err := holder.Lock(bg())
	require.NoError(t, err)

	ml, err := locks.NewMultiMutex(connect(t), []string{c, b, a})
	require.NoError(t, err)
	queued := make(chan struct{})
	held := make(chan *locks.Hold, 1)
	go func() {
		h, err := ml.Lock(locks.WithQueued(bg(), func() { close(queued) }))
		if err != nil {
			t.Errorf("multi-lock: %v", err)
		}
		held <- h
	}()
	<-queued
	assert.Len(t, children(t, admin, a), 1, "a, before the busy member, is kept")
	assert.Len(t, children(t, admin, b), 2, "the holder of b, then the multi-lock")
	assert.Empty(t, children(t, admin, c), "c, after the busy member, is given back")

	require.NoError(t, first.Release(bg()))
	h := <-held
	require.NotNil(t, h)
	for _, p := range []string{a, b, c} {
		assert.Len(t, children(t, admin, p), 1, "the multi-lock holds %s", p)
	}
	require.NoError(t, h.Release(bg()))
}
