package integration_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/barriers"
	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/zktest"
)

func newBarrier(t *testing.T, s *recipes.Session, path string) *barriers.Barrier {
	t.Helper()
	b, err := barriers.NewBarrier(s, path)
	require.NoError(t, err)
	return b
}

func newDoubleBarrier(t *testing.T, s *recipes.Session, path string, members int) *barriers.DoubleBarrier {
	t.Helper()
	b, err := barriers.NewDoubleBarrier(s, path, members)
	require.NoError(t, err)
	return b
}

// TestBarrierReleasesEveryWaiter: waiters on three clients all return once
// the barrier is removed, and not before.
func TestBarrierReleasesEveryWaiter(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/barrier"
	setter := newBarrier(t, connect(t), path)
	require.NoError(t, setter.Set(bg()))
	require.NoError(t, setter.Set(bg()), "setting twice is not an error")

	done := make(chan error, 3)
	for range 3 {
		b := newBarrier(t, connect(t), path)
		go func() { done <- b.Wait(bg()) }()
	}
	// Each waiter has a watch on the barrier once the server lists it.
	eventually(t, "waiters to watch the barrier", func() bool {
		out := wchp(t, zktest.Servers(t)[0])
		return countLines(out, path) >= 3
	})
	select {
	case err := <-done:
		t.Fatalf("a waiter passed a standing barrier: %v", err)
	default:
	}
	require.NoError(t, setter.Remove(bg()))
	for range 3 {
		require.NoError(t, <-done)
	}
	require.NoError(t, setter.Remove(bg()), "removing twice is not an error")
	ok, _, err := admin.Exists(path)
	require.NoError(t, err)
	assert.False(t, ok)
}

func TestBarrierWaitWithoutBarrierReturnsAtOnce(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	b := newBarrier(t, connect(t), root+"/barrier")
	ctx, cancel := context.WithTimeout(bg(), waitLong)
	defer cancel()
	require.NoError(t, b.Wait(ctx))
	up, err := b.IsSet(ctx)
	require.NoError(t, err)
	assert.False(t, up)
}

// TestBarrierWaitFailsWhenTheServerStops is Curator's testServerCrash: a
// waiter that loses the server must fail, not pass.
func TestBarrierWaitFailsWhenTheServerStops(t *testing.T) {
	t.Parallel()
	srv := zktest.Start(t)
	s := connectTo(t, srv.Servers())
	b := newBarrier(t, s, "/barrier")
	require.NoError(t, b.Set(bg()))
	done := make(chan error, 1)
	go func() { done <- b.Wait(bg()) }()
	eventually(t, "the waiter to watch", func() bool {
		out := wchp(t, srv.Addr())
		return countLines(out, "/barrier") >= 1
	})
	require.NoError(t, srv.Stop())
	select {
	case err := <-done:
		require.Error(t, err)
		assert.ErrorIs(t, err, recipes.ErrSessionLost)
	case <-time.After(waitLong):
		t.Fatal("the waiter neither passed nor failed")
	}
}

// TestDoubleBarrierAllInsideBeforeAnyPasses: 5 clients, 5 members: all five
// are inside before any passes Enter; after Leave nobody is left.
func TestDoubleBarrierAllInsideBeforeAnyPasses(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/double"
	const n = 5
	var mu sync.Mutex
	arrived, passedEarly := 0, false
	var inside sync.WaitGroup
	var wg sync.WaitGroup
	for range n {
		b := newDoubleBarrier(t, connect(t), path, n)
		inside.Add(1)
		wg.Go(func() {
			mu.Lock()
			arrived++
			mu.Unlock()
			if !assert.NoError(t, b.Enter(bg())) {
				inside.Done()
				return
			}
			mu.Lock()
			passedEarly = passedEarly || arrived < n
			mu.Unlock()
			inside.Done()
			inside.Wait() // everyone is through Enter before anyone leaves
			assert.NoError(t, b.Leave(bg()))
		})
	}
	wg.Wait()
	assert.False(t, passedEarly, "a member passed Enter before all had arrived")
	assert.Empty(t, children(t, admin, path), "members or ready left behind")
}

// TestDoubleBarrierOverSubscribed is Curator's testOverSubscribed: 6
// members at a barrier for 5 all pass (the count is a threshold).
func TestDoubleBarrierOverSubscribed(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/double"
	s := connect(t)
	var wg sync.WaitGroup
	for range 6 {
		b := newDoubleBarrier(t, s, path, 5)
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(bg(), waitLong)
			defer cancel()
			if assert.NoError(t, b.Enter(ctx)) {
				assert.NoError(t, b.Leave(ctx))
			}
		})
	}
	wg.Wait()
	assert.Empty(t, children(t, admin, path))
}

// TestDoubleBarrierNoEarlyEnter: with 1 of 3 members there, a reconnect of
// its session, unrelated changes in the barrier directory (Curator's GH-1290
// wake-ups) and a member that comes and gives up must not let Enter return.
// (With 2 members the one that gives up would complete the first's count
// whenever the first counts again after its reconnect: a race, not a bug.)
func TestDoubleBarrierNoEarlyEnter(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/double"
	proxy := testenv.ProxyT(t)
	states := make(stateLog, 16)
	s := connect(t, recipes.WithDialer(proxy.Dialer), recipes.WithStateListener(states.listener))
	first := newDoubleBarrier(t, s, path, 3)
	entered := make(chan error, 1)
	go func() { entered <- first.Enter(bg()) }()
	eventually(t, "the first member to arrive", func() bool { return len(children(t, admin, path)) == 1 })

	proxy.Cut()
	states.waitFor(t, recipes.StateSuspended)
	proxy.Restore()
	states.waitFor(t, recipes.StateReconnected)
	// Unrelated children come and go, and a member comes and gives up.
	_, err := admin.Create(path+"/unrelated", nil, 0, aclAll)
	require.NoError(t, err)
	require.NoError(t, admin.Delete(path+"/unrelated", -1))
	quitter := newDoubleBarrier(t, connect(t), path, 3)
	ctx, cancel := context.WithTimeout(bg(), 200*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, quitter.Enter(ctx), context.DeadlineExceeded)
	arrived, open, err := first.Arrived(bg())
	require.NoError(t, err)
	assert.Equal(t, 1, arrived)
	assert.False(t, open)
	select {
	case err := <-entered:
		t.Fatalf("Enter returned with 1 of 3 members: %v", err)
	default:
	}

	second := newDoubleBarrier(t, connect(t), path, 3)
	go func() { entered <- second.Enter(bg()) }()
	third := newDoubleBarrier(t, connect(t), path, 3)
	require.NoError(t, third.Enter(bg()))
	require.NoError(t, <-entered)
	require.NoError(t, <-entered)
	left := make(chan error, 2)
	go func() { left <- first.Leave(bg()) }()
	go func() { left <- second.Leave(bg()) }()
	require.NoError(t, third.Leave(bg()))
	require.NoError(t, <-left)
	require.NoError(t, <-left)
}

// TestDoubleBarrierGiveUpLeavesNoNode: a member whose Enter times out takes
// its node away and is not counted; a Leave with a timeout returns.
func TestDoubleBarrierGiveUpLeavesNoNode(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/double"
	b := newDoubleBarrier(t, connect(t), path, 2)
	ctx, cancel := context.WithTimeout(bg(), 200*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, b.Enter(ctx), context.DeadlineExceeded)
	assert.Empty(t, children(t, admin, path), "the member that gave up left its node")
	assert.ErrorIs(t, b.Leave(bg()), barriers.ErrNotEntered)

	// Two enter; one leaves with a deadline while the other stays: Leave
	// must return, and leave nothing of its own.
	one, two := newDoubleBarrier(t, connect(t), path, 2), newDoubleBarrier(t, connect(t), path, 2)
	entered := make(chan error, 1)
	go func() { entered <- one.Enter(bg()) }()
	require.NoError(t, two.Enter(bg()))
	require.NoError(t, <-entered)
	assert.ErrorIs(t, two.Enter(bg()), barriers.ErrEntered)
	ctx, cancel = context.WithTimeout(bg(), 300*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, one.Leave(ctx), context.DeadlineExceeded)
	assert.NotContains(t, children(t, admin, path), one.Node()[len(path)+1:])
	require.NoError(t, two.Leave(bg()))
	assert.Empty(t, children(t, admin, path))
}

func TestBarriersBadInputCreatesNothing(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	s := connect(t)
	for _, members := range []int{0, -3, pastJavaInt} {
		_, err := barriers.NewDoubleBarrier(s, root+"/double", members)
		assert.ErrorIs(t, err, recipes.ErrInvalid)
	}
	if pastJavaInt != 0 {
		_, err := barriers.NewDoubleBarrier(s, root+"/double", pastJavaInt)
		assert.ErrorContains(t, err, "a double barrier takes at most 2147483647 members (Curator's limit, a Java int), not 2147483648")
	}
	for _, p := range []string{"", "barrier", root + "/b/"} {
		_, err := barriers.NewBarrier(s, p)
		assert.ErrorIs(t, err, recipes.ErrInvalid, "%q", p)
		_, err = barriers.NewDoubleBarrier(s, p, 2)
		assert.ErrorIs(t, err, recipes.ErrInvalid, "%q", p)
	}
	_, err := barriers.NewBarrier(nil, root+"/b")
	assert.ErrorIs(t, err, recipes.ErrInvalid)
	ok, _, err := admin.Exists(root)
	require.NoError(t, err)
	assert.False(t, ok)
}

var aclAll = zk.WorldACL(zk.PermAll)

// countLines reads the "wchp" four-letter word's output (each watched path,
// then the sessions watching it, indented) and returns how many sessions
// watch path.
func countLines(wchp, path string) int {
	n, in := 0, false
	for line := range strings.SplitSeq(wchp, "\n") {
		switch {
		case strings.HasPrefix(line, "/"):
			in = line == path
		case in && strings.TrimSpace(line) != "":
			n++
		}
	}
	return n
}

// TestDoubleBarrierRecoversFromLostCreateReply drops the reply to a
// member's create: the retry finds its node there and enters.
func TestDoubleBarrierRecoversFromLostCreateReply(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/double"
	proxy := testenv.ProxyT(t)
	b := newDoubleBarrier(t, connect(t, recipes.WithDialer(proxy.Dialer)), path, 1)
	dropped := proxy.DropReply(func(op int32, p string) bool {
		return (op == opCreate || op == opCreate2) && p == b.Node()
	})
	ctx, cancel := context.WithTimeout(bg(), waitLong)
	defer cancel()
	require.NoError(t, b.Enter(ctx))
	select {
	case <-dropped:
	default:
		t.Fatal("the create reply was never dropped")
	}
	require.NoError(t, b.Leave(ctx))
	assert.Empty(t, children(t, admin, path))
}

// TestBarrierRemoveNamesTheLockUnderIt: a lock cannot tell a barrier's node
// from a parent of its nodes, so it may take one; the barrier's Remove then
// says which recipe's node keeps it up, with ErrOtherRecipe, and the barrier
// stays up.
func TestBarrierRemoveNamesTheLockUnderIt(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	path := root + "/b"
	s := connect(t)
	b, err := barriers.NewBarrier(s, path)
	require.NoError(t, err)
	require.NoError(t, b.Set(bg()))
	held, err := newMutex(t, connect(t), path).Lock(bg())
	require.NoError(t, err)
	err = b.Remove(bg())
	require.ErrorIs(t, err, recipes.ErrOtherRecipe)
	assert.Contains(t, err.Error(), "mutex's node")
	up, err := b.IsSet(bg())
	require.NoError(t, err)
	assert.True(t, up)
	require.NoError(t, held.Release(bg()))
	require.NoError(t, b.Remove(bg()), "the lock's node is gone")
	up, err = b.IsSet(bg())
	require.NoError(t, err)
	assert.False(t, up)
}

// TestDoubleBarrierCountedMemberEntersAfterReadyGoes: the barrier opens with
// a waiting member counted, and the ready node is gone again before that
// member hears of it (here another member's Leave gave up at once, deleting
// ready as it went). The member is in all the same: ready's creation is
// enough, and a second look must not send it back to wait.
func TestDoubleBarrierCountedMemberEntersAfterReadyGoes(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/db"
	// The barrier's directory is there already, so that the member's
	// first round trip (create, listing) is all it sends before it waits:
	// else its create fails, and the listing that goes with it, and it
	// makes the directory in round trips of its own, which the stall below
	// would hold while the test counts on its node being there.
	_, err := admin.Create(root, nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	_, err = admin.Create(path, nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	defer func() {
		assert.NoError(t, admin.Delete(path, -1))
		assert.NoError(t, admin.Delete(root, -1))
	}()
	s, proxy := connectCounted(t)
	listed := proxy.Counter(func(op int32, p string) bool {
		return (op == testenv.OpGetChildren || op == testenv.OpGetChildren2) && p == path
	})
	a := newDoubleBarrier(t, s, path, 2)
	c := newDoubleBarrier(t, connect(t), path, 2)
	entered := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(bg(), waitLong)
		defer cancel()
		entered <- a.Enter(ctx)
	}()
	eventually(t, "the member to count itself alone and wait", func() bool {
		pending, _ := proxy.Pending()
		return listed() >= 1 && pending == 0
	})
	proxy.StallDown() // what the server tells the member comes late
	require.NoError(t, c.Enter(bg()), "the second member opens the barrier")
	gaveUp, cancel := context.WithCancel(bg())
	cancel()
	require.Error(t, c.Leave(gaveUp))
	proxy.Restore()
	require.NoError(t, <-entered, "a member counted when the barrier opened did not get in")
	require.NoError(t, a.Leave(bg()))
}

// TestDoubleBarrierMembersMustAgreeOnTheCount: a member for 3 at a barrier
// where a member for 2 waits (and the other way round) is refused with
// ErrMembers, takes its node away, and leaves the waiter waiting for a
// member that agrees, with whom it passes.
func TestDoubleBarrierMembersMustAgreeOnTheCount(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	for _, c := range []struct{ first, second int }{{2, 3}, {3, 2}} {
		path := fmt.Sprintf("%s/double-%d-%d", root, c.first, c.second)
		first := newDoubleBarrier(t, connect(t), path, c.first)
		entered := make(chan error, 1)
		go func() { entered <- first.Enter(bg()) }()
		waitQueued(t, admin, path, 1)

		ctx, cancel := context.WithTimeout(bg(), waitLong)
		err := newDoubleBarrier(t, connect(t), path, c.second).Enter(ctx)
		cancel()
		require.ErrorIs(t, err, barriers.ErrMembers, "%d members after %d", c.second, c.first)
		assert.Contains(t, err.Error(), fmt.Sprintf("waits for %d members, this one for %d", c.first, c.second))
		assert.Equal(t, []string{first.Node()[len(path)+1:]}, children(t, admin, path), "the refused member left its node")

		// The first still waits for members that agree with it.
		others := make([]*barriers.DoubleBarrier, c.first-1)
		for i := range others {
			others[i] = newDoubleBarrier(t, connect(t), path, c.first)
		}
		var wg sync.WaitGroup
		for _, o := range others {
			wg.Go(func() { assert.NoError(t, o.Enter(bg())) })
		}
		wg.Wait()
		require.NoError(t, <-entered)
		for _, o := range others {
			wg.Go(func() { assert.NoError(t, o.Leave(bg())) })
		}
		require.NoError(t, first.Leave(bg()))
		wg.Wait()
		assert.Empty(t, children(t, admin, path))
	}
}

// TestDoubleBarrierMembersRaceWithDifferentCounts: members for 2 and for 3
// that enter at once: whichever lists last sees the other, so at least one
// is refused, and neither passes (the barrier never opens).
func TestDoubleBarrierMembersRaceWithDifferentCounts(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/double"
	ctx, cancel := context.WithCancel(bg())
	defer cancel()
	errs := make(chan error, 2)
	for _, n := range []int{2, 3} {
		b := newDoubleBarrier(t, connect(t), path, n)
		go func() { errs <- b.Enter(ctx) }()
	}
	err := <-errs
	require.ErrorIs(t, err, barriers.ErrMembers)
	cancel() // the other, if it waits
	err = <-errs
	require.Error(t, err, "a member passed a barrier it disagreed on")
	assert.True(t, errors.Is(err, barriers.ErrMembers) || errors.Is(err, context.Canceled), "%v", err)
	assert.Empty(t, children(t, admin, path))
}
