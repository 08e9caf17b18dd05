package integration_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/locks"
)

// TestMultiLockOppositeOrdersDoNotDeadlock: two multi-locks over {A, B},
// given in opposite orders, 50 rounds each, finish.
func TestMultiLockOppositeOrdersDoNotDeadlock(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	a, b := root+"/a", root+"/b"
	tr := newTracker(map[string]int{"AB": 1})
	var wg sync.WaitGroup
	for _, paths := range [][]string{{a, b}, {b, a}} {
		ml, err := locks.NewMultiMutex(connect(t), paths)
		require.NoError(t, err)
		wg.Go(func() {
			for range 50 {
				ctx, cancel := context.WithTimeout(bg(), waitLong)
				held, err := ml.Lock(ctx)
				cancel()
				if !assert.NoError(t, err) {
					return
				}
				tr.enter("AB")
				tr.leave("AB")
				assert.NoError(t, held.Release(bg()))
			}
		})
	}
	wg.Wait()
	tr.check(t)
	assert.Equal(t, 100, tr.entriesOf("AB"))
}

// TestMultiLockBusyMembersDoNotDeadlock: multi-locks over overlapping
// members given in different orders, and a mutex that keeps one member
// busy now and then, so that a multi-lock often finds a member busy after
// free ones (which it gives back) and before others: every round of every
// one finishes, and no two hold one member at once.
func TestMultiLockBusyMembersDoNotDeadlock(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	name := map[string]string{root + "/a": "a", root + "/b": "b", root + "/c": "c", root + "/d": "d"}
	at := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, root+"/"+n)
		}
		return out
	}
	tr := newTracker(map[string]int{"a": 1, "b": 1, "c": 1, "d": 1})
	const rounds = 25
	hold := func(paths []string, take func() (*locks.Hold, error)) {
		for range rounds {
			held, err := take()
			if !assert.NoError(t, err) {
				return
			}
			for _, p := range paths {
				tr.enter(name[p])
			}
			for _, p := range paths {
				tr.leave(name[p])
			}
			assert.NoError(t, held.Release(bg()))
		}
	}
	var wg sync.WaitGroup
	for _, names := range [][]string{{"a", "b", "c", "d"}, {"d", "c", "b", "a"}, {"d", "b"}, {"c", "a"}} {
		ml, err := locks.NewMultiMutex(connect(t), at(names...))
		require.NoError(t, err)
		wg.Go(func() {
			hold(at(names...), func() (*locks.Hold, error) {
				ctx, cancel := context.WithTimeout(bg(), waitLong)
				defer cancel()
				return ml.Lock(ctx)
			})
		})
	}
	m := newMutex(t, connect(t), root+"/c")
	wg.Go(func() {
		hold(at("c"), func() (*locks.Hold, error) {
			ctx, cancel := context.WithTimeout(bg(), waitLong)
			defer cancel()
			return m.Lock(ctx)
		})
	})
	wg.Wait()
	tr.check(t)
	assert.Equal(t, 4*rounds, tr.entriesOf("c"), "entries of c: three multi-locks and the mutex")
}

// failingLocker is a Locker whose Lock fails on demand, after recording
// what the real lock it wraps looked like then.
type failingLocker struct {
	locks.Locker
	failLock bool
	sawHeld  func() bool // asked when Lock is called
	held     bool
}

var errInjected = errors.New("injected failure")

func (f *failingLocker) Lock(ctx context.Context) (*locks.Hold, error) {
	if f.sawHeld != nil {
		f.held = f.sawHeld()
	}
	if f.failLock {
		return nil, errInjected
	}
	return f.Locker.Lock(ctx)
}

// TestMultiLockRollsBackWhenAMemberFails is Curator's
// testSomeLocksFailToLock: the good lock is taken first (path order), and
// released when the bad one fails.
func TestMultiLockRollsBackWhenAMemberFails(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	s := connect(t)
	good := newMutex(t, s, root+"/a")
	bad := &failingLocker{Locker: newMutex(t, s, root+"/b"), failLock: true}
	bad.sawHeld = func() bool { return len(children(t, admin, root+"/a")) == 1 }
	ml, err := locks.NewMultiLock(bad, good) // given out of order
	require.NoError(t, err)
	assert.Equal(t, root+"/a,"+root+"/b", ml.Path())

	_, err = ml.Lock(bg())
	assert.ErrorIs(t, err, errInjected)
	assert.Contains(t, err.Error(), root+"/b")
	assert.True(t, bad.held, "the good lock was not held when the bad one was tried")
	assert.Empty(t, children(t, admin, root+"/a"), "the good lock was not rolled back")
}

// TestMultiLockReleaseGoesOnPastFailures is Curator's
// testSomeReleasesFail: every member is released, and the
// failure is reported, naming its member. A member's release fails here
// because its Hold was released already, through Members.
func TestMultiLockReleaseGoesOnPastFailures(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	s := connect(t)
	ml, err := locks.NewMultiLock(newMutex(t, s, root+"/a"), newMutex(t, s, root+"/b"))
	require.NoError(t, err)

	held, err := ml.Lock(bg())
	require.NoError(t, err)
	members := held.Members()
	require.Len(t, members, 2)
	require.NoError(t, members[1].Release(bg()))
	err = held.Release(bg())
	assert.ErrorIs(t, err, locks.ErrNotHeld)
	assert.Contains(t, err.Error(), root+"/b")
	assert.Empty(t, children(t, admin, root+"/a"), "release stopped at the failing member")
	assert.ErrorIs(t, held.Release(bg()), locks.ErrNotHeld)
}

// TestMultiLockOverMixedLockers takes a mutex, a write lock and a
// semaphore mutex as one, and is lost as one.
func TestMultiLockOverMixedLockers(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	s := connect(t)
	rw := newRWMutex(t, s, root+"/rw")
	sm, err := locks.NewSemaphoreMutex(s, root+"/sm")
	require.NoError(t, err)
	ml, err := locks.NewMultiLock(newMutex(t, s, root+"/m"), rw, sm)
	require.NoError(t, err)
	held, err := ml.Lock(bg())
	require.NoError(t, err)
	_, ok, err := rw.TryRLock(bg())
	require.NoError(t, err)
	assert.False(t, ok, "the write lock is not held")

	// Deleting one member's node loses the whole hold.
	nodes := children(t, admin, root+"/m")
	require.Len(t, nodes, 1)
	require.NoError(t, admin.Delete(root+"/m/"+nodes[0], -1))
	<-held.Done()
	assert.ErrorIs(t, held.Err(), locks.ErrLockLost)
	err = held.Release(bg())
	assert.ErrorIs(t, err, locks.ErrLockLost)
	assert.Contains(t, err.Error(), root+"/m")
	assert.Empty(t, children(t, admin, root+"/rw"))
	assert.Empty(t, children(t, admin, root+"/sm/leases"))
}

// TestMultiLockHoldHasEveryMember: a multi-lock's Hold gives each member's
// path, node and fencing token, its own Token is 0, its Guard checks every
// member, and its guarded Multi fails once any member is lost. Its context
// re-enters the multi-lock and each member.
func TestMultiLockHoldHasEveryMember(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	s := connect(t)
	a, b := newMutex(t, s, root+"/a"), newMutex(t, s, root+"/b")
	ml, err := locks.NewMultiLock(b, a)
	require.NoError(t, err)
	h, err := ml.Lock(bg())
	require.NoError(t, err)
	assert.Equal(t, root+"/a,"+root+"/b", h.Path())
	assert.Empty(t, h.Node())

	members := h.Members()
	require.Len(t, members, 2)
	for i, m := range []*locks.Mutex{a, b} {
		ps, err := m.Participants(bg())
		require.NoError(t, err)
		require.Len(t, ps, 1)
		assert.Equal(t, m.Path(), members[i].Path())
		assert.Equal(t, ps[0].Path, members[i].Node())
		assert.Equal(t, ps[0].Token, members[i].Token(), "member %s's token", m.Path())
		assert.Nil(t, members[i].Members())
	}
	assert.Zero(t, h.Token(), "a multi-lock's own token")
	guards := h.Guard()
	require.Len(t, guards, 2)
	assert.Equal(t, members[0].Node(), guards[0].Path)
	assert.Equal(t, members[1].Node(), guards[1].Path)

	// Re-entry: the multi-lock itself, and a member.
	again, err := ml.Lock(h.Context())
	require.NoError(t, err)
	assert.Same(t, h, again)
	inner, err := b.Lock(h.Context())
	require.NoError(t, err)
	assert.Same(t, members[1], inner)
	require.NoError(t, inner.Release(bg()))
	require.NoError(t, again.Release(bg()))
	require.NoError(t, h.Err())

	data := root + "/data"
	_, err = h.Multi(bg(), &zk.CreateRequest{Path: data, Acl: zk.WorldACL(zk.PermAll)})
	require.NoError(t, err)
	require.NoError(t, admin.Delete(members[1].Node(), -1))
	<-h.Done()
	assert.ErrorIs(t, h.Err(), locks.ErrLockLost)
	assert.ErrorIs(t, context.Cause(h.Context()), locks.ErrLockLost)
	_, err = h.Multi(bg(), &zk.DeleteRequest{Path: data, Version: -1})
	assert.ErrorIs(t, err, locks.ErrLockLost)
	ok, _, err := admin.Exists(data)
	require.NoError(t, err)
	assert.True(t, ok, "multi applied after a member was lost")
	require.NoError(t, admin.Delete(data, -1))
	assert.ErrorIs(t, h.Release(bg()), locks.ErrLockLost)
	assert.Empty(t, children(t, admin, root+"/a"))
}

// gatedLocker is a Locker whose Lock waits for open before it takes the
// lock it wraps, and closes reached when it starts waiting.
type gatedLocker struct {
	locks.Locker
	reached, open chan struct{}
}

func (g *gatedLocker) Lock(ctx context.Context) (*locks.Hold, error) {
	close(g.reached)
	select {
	case <-g.open:
		return g.Locker.Lock(ctx)
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// TestMultiLockTokenIsNoFence is issue 27's case: H1 = {B, C} holds B; H2 =
// {A, B} queues on B; only then does H1 take C, so the largest of H1's
// member tokens (C's) is larger than the token H2 holds B with, once H1 has
// let B go. A store of B fenced with that largest would take a stale H1's
// write after H2's. So a multi-lock's Token is 0, and each member's token
// (Members) orders the holders of that member.
func TestMultiLockTokenIsNoFence(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	a, b, c := root+"/a", root+"/b", root+"/c"
	s1, s2 := connect(t), connect(t)
	lateC := &gatedLocker{Locker: newMutex(t, s1, c), reached: make(chan struct{}), open: make(chan struct{})}
	h1Lock, err := locks.NewMultiLock(newMutex(t, s1, b), lateC)
	require.NoError(t, err)
	h2Lock, err := locks.NewMultiMutex(s2, []string{a, b})
	require.NoError(t, err)
	type result struct {
		h   *locks.Hold
		err error
	}
	lock := func(ml *locks.MultiLock, queued func()) <-chan result {
		got := make(chan result, 1)
		go func() {
			ctx, cancel := context.WithTimeout(bg(), waitLong)
			defer cancel()
			h, err := ml.Lock(locks.WithQueued(ctx, queued))
			got <- result{h, err}
		}()
		return got
	}

	got1 := lock(h1Lock, func() {})
	<-lateC.reached // H1 holds B
	h2Queued := make(chan struct{})
	got2 := lock(h2Lock, func() { close(h2Queued) })
	<-h2Queued // on B, behind H1 (having tried it, found it busy, and queued)
	ps, err := newMutex(t, s2, b).Participants(bg())
	require.NoError(t, err)
	require.Len(t, ps, 2)
	queued := ps[1].Token // H2's node on B
	close(lateC.open)
	r1 := <-got1
	require.NoError(t, r1.err)
	h1 := r1.h.Members() // B, C
	require.Len(t, h1, 2)
	assert.Zero(t, r1.h.Token(), "H1's own token")
	assert.Greater(t, h1[1].Token(), queued, "H1 took C after H2 queued on B")

	require.NoError(t, r1.h.Release(bg())) // H1 is now a stale holder of B
	r2 := <-got2
	require.NoError(t, r2.err)
	defer func() { assert.NoError(t, r2.h.Release(bg())) }()
	h2 := r2.h.Members() // A, B
	require.Len(t, h2, 2)
	assert.Zero(t, r2.h.Token(), "H2's own token")
	assert.Equal(t, queued, h2[1].Token(), "H2 holds B with its waiting node's token")
	assert.Greater(t, h2[1].Token(), h1[0].Token(), "B's tokens order B's holders")
	assert.Greater(t, h1[1].Token(), h2[1].Token(), "the largest of the stale H1's tokens would pass B's fence")
}

func TestMultiLockBadInputCreatesNothing(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	s := connect(t)
	_, err := locks.NewMultiLock()
	assert.ErrorIs(t, err, recipes.ErrInvalid)
	_, err = locks.NewMultiLock(nil)
	assert.ErrorIs(t, err, recipes.ErrInvalid)
	_, err = locks.NewMultiMutex(s, []string{root + "/a", root + "/b", root + "/a"})
	assert.ErrorIs(t, err, recipes.ErrInvalid)
	assert.Contains(t, err.Error(), "twice")
	_, err = locks.NewMultiMutex(s, nil)
	assert.ErrorIs(t, err, recipes.ErrInvalid)
	_, err = locks.NewMultiMutex(s, []string{root + "/a", "b"})
	assert.ErrorIs(t, err, recipes.ErrInvalid)
	rw := newRWMutex(t, s, root+"/rw")
	_, err = locks.NewMultiLock(rw, rw.RLocker())
	assert.ErrorIs(t, err, recipes.ErrInvalid, "both halves of one RWMutex")
	ok, _, err := admin.Exists(root)
	require.NoError(t, err)
	assert.False(t, ok)
}

// TestMultiLockOneOrderForEveryLock: a member that is a multi-lock gives its
// members, so one order covers every lock taken (ordering it by its own
// joined path let {{a,d},c} take d before c while {c,d} took c before d: a
// deadlock), and a lock it shares with another member is refused; members
// are ordered by their paths in ZooKeeper, whatever their sessions' chroots.
func TestMultiLockOneOrderForEveryLock(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	s := connect(t)
	ad, err := locks.NewMultiMutex(s, []string{root + "/a", root + "/d"})
	require.NoError(t, err)
	nested, err := locks.NewMultiLock(ad, newMutex(t, s, root+"/c"))
	require.NoError(t, err)
	assert.Equal(t, root+"/a,"+root+"/c,"+root+"/d", nested.Path(), "the order locks are taken in")
	h, err := nested.Lock(bg())
	require.NoError(t, err)
	assert.Len(t, h.Members(), 3)
	require.NoError(t, h.Release(bg()))

	_, err = locks.NewMultiLock(ad, newMutex(t, s, root+"/a"))
	assert.ErrorIs(t, err, recipes.ErrInvalid, "a lock in a member multi-lock and given again")

	// root/r/b seen from a session chrooted at root/r is "/b", which sorts
	// before "root/r/a" as a caller's path, but after it in ZooKeeper.
	chrooted := connect(t, recipes.WithChroot(root+"/r"))
	mixed, err := locks.NewMultiLock(newMutex(t, chrooted, "/b"), newMutex(t, s, root+"/r/a"))
	require.NoError(t, err)
	assert.Equal(t, root+"/r/a,/b", mixed.Path())
}

func TestSemaphoreMutexIsNotReentrant(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/sm"
	s := connect(t)
	m, err := locks.NewSemaphoreMutex(s, path)
	require.NoError(t, err)
	held, err := m.Lock(bg())
	require.NoError(t, err)
	_, err = m.Lock(held.Context())
	assert.ErrorIs(t, err, locks.ErrReentrant)
	assert.Len(t, children(t, admin, path+"/leases"), 1)

	// Another goroutine may release it.
	done := make(chan error, 1)
	go func() { done <- held.Release(bg()) }()
	require.NoError(t, <-done)
	assert.ErrorIs(t, held.Err(), locks.ErrReleased)
	assert.ErrorIs(t, held.Release(bg()), locks.ErrNotHeld)

	// And it excludes like any lock.
	other, err := locks.NewSemaphoreMutex(connect(t), path)
	require.NoError(t, err)
	tr := newTracker(map[string]int{"M": 1})
	var wg sync.WaitGroup
	for _, lk := range []*locks.SemaphoreMutex{m, other} {
		wg.Go(func() {
			for range 20 {
				h, err := lk.Lock(bg())
				if !assert.NoError(t, err) {
					return
				}
				tr.enter("M")
				tr.leave("M")
				assert.NoError(t, h.Release(bg()))
			}
		})
	}
	wg.Wait()
	tr.check(t)
}
