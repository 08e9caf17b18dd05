package integration_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/barriers"
	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/internal/znode"
	"github.com/zkrecipes/recipes/locks"
	"github.com/zkrecipes/recipes/zktest"
)

// liveNodes returns every node under p (p included) that a session owns,
// with its data: what a recipe leaves behind, containers aside.
func liveNodes(t *testing.T, conn *zk.Conn, p string) map[string]string {
	t.Helper()
	out := map[string]string{}
	walkTree(t, conn, p, func(p string, data []byte, st *zk.Stat) {
		if st.EphemeralOwner > 0 || len(data) > 0 {
			out[p] = string(data)
		}
	})
	return out
}

// tree lists every node under p, p included, containers too.
func tree(t *testing.T, conn *zk.Conn, p string) []string {
	t.Helper()
	var out []string
	walkTree(t, conn, p, func(p string, _ []byte, _ *zk.Stat) { out = append(out, p) })
	slices.Sort(out)
	return out
}

// walkTree calls visit for every node under p, p included.
func walkTree(t *testing.T, conn *zk.Conn, p string, visit func(p string, data []byte, st *zk.Stat)) {
	t.Helper()
	data, st, err := conn.Get(p)
	if errors.Is(err, zk.ErrNoNode) {
		return
	}
	require.NoError(t, err)
	visit(p, data, st)
	for _, c := range children(t, conn, p) {
		walkTree(t, conn, p+"/"+c, visit)
	}
}

// recipeUse is one recipe taking a path: it returns a release, or an error.
// Uses of one kind share a layout (the read and write halves of one lock).
type recipeUse struct {
	name, kind string
	take       func(ctx context.Context, s *recipes.Session, path string) (func() error, error)
}

func lockerUse(name, kind string, newLocker func(*recipes.Session, string) (locks.Locker, error)) recipeUse {
	return recipeUse{name, kind, func(ctx context.Context, s *recipes.Session, path string) (func() error, error) {
		l, err := newLocker(s, path)
		if err != nil {
			return nil, err
		}
		held, err := l.Lock(ctx)
		if err != nil {
			return nil, err
		}
		return func() error { return held.Release(bg()) }, nil
	}}
}

var (
	mutexUse = lockerUse("mutex", "mutex", func(s *recipes.Session, p string) (locks.Locker, error) { return locks.NewMutex(s, p) })
	writeUse = lockerUse("write lock", "rwlock", func(s *recipes.Session, p string) (locks.Locker, error) { return locks.NewRWMutex(s, p) })
	readUse  = lockerUse("read lock", "rwlock", func(s *recipes.Session, p string) (locks.Locker, error) {
		rw, err := locks.NewRWMutex(s, p)
		if err != nil {
			return nil, err
		}
		return rw.RLocker(), nil
	})
	semMutexUse = lockerUse("semaphore mutex", "semaphore", func(s *recipes.Session, p string) (locks.Locker, error) { return locks.NewSemaphoreMutex(s, p) })
	semUse      = recipeUse{"semaphore", "semaphore", func(ctx context.Context, s *recipes.Session, p string) (func() error, error) {
		sem, err := locks.NewSemaphore(s, p, 3)
		if err != nil {
			return nil, err
		}
		leases, err := sem.Acquire(ctx, 1)
		if err != nil {
			return nil, err
		}
		return func() error { return leases[0].Release(bg()) }, nil
	}}
	// A double barrier for one member opens at once: it takes the path.
	doubleUse = recipeUse{"double barrier", "double-barrier", func(ctx context.Context, s *recipes.Session, p string) (func() error, error) {
		db, err := barriers.NewDoubleBarrier(s, p, 1)
		if err != nil {
			return nil, err
		}
		if err := db.Enter(ctx); err != nil {
			return nil, err
		}
		return func() error {
			// Bounded: foreign nodes under the path would keep it waiting.
			ctx, cancel := context.WithTimeout(bg(), waitLong)
			defer cancel()
			return db.Leave(ctx)
		}, nil
	}}
	barrierUse = recipeUse{"barrier", "barrier", func(ctx context.Context, s *recipes.Session, p string) (func() error, error) {
		b, err := barriers.NewBarrier(s, p)
		if err != nil {
			return nil, err
		}
		if err := b.Set(ctx); err != nil {
			return nil, err
		}
		return func() error { return b.Remove(bg()) }, nil
	}}
)

// TestRecipesRefuseAPathAnotherUses: while one recipe holds a path, a recipe
// of another kind on the same path is refused with ErrOtherRecipe, whichever
// came first, and leaves nothing behind.
func TestRecipesRefuseAPathAnotherUses(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	first, second := connect(t), connect(t)
	uses := []recipeUse{mutexUse, writeUse, readUse, semUse, semMutexUse, doubleUse, barrierUse}
	for i, a := range uses {
		for j, b := range uses {
			if a.kind == b.kind || a.kind == "barrier" {
				// A lock cannot tell a barrier's node from a parent
				// someone made for its locks.
				continue
			}
			path := root + "/" + string(rune('a'+i)) + string(rune('a'+j))
			release, err := a.take(bg(), first, path)
			require.NoError(t, err, "%s", a.name)
			before := liveNodes(t, admin, path)

			ctx, cancel := context.WithTimeout(bg(), waitLong)
			releaseB, err := b.take(ctx, second, path)
			cancel()
			if err == nil {
				require.NoError(t, releaseB())
			}
			if !errors.Is(err, recipes.ErrOtherRecipe) {
				t.Errorf("a %s at a path where a %s holds: %v, want ErrOtherRecipe", b.name, a.name, err)
			}
			assert.Equal(t, before, liveNodes(t, admin, path), "a refused %s after a %s left something behind", b.name, a.name)
			require.NoError(t, release())
		}
	}
}

// TestRefusedRecipeCreatesNothing: a refused recipe leaves the path's tree as
// it found it, containers included, so the recipe that uses the path can go on
// using it at once. The server here never reaps containers during the test:
// on the harness's shared one, which reaps them every 100 ms, an emptied
// container left by the refusal would soon be gone anyway, but a production
// server takes a minute, and refuses the path's own recipe meanwhile.
func TestRefusedRecipeCreatesNothing(t *testing.T) {
	t.Parallel()
	srv := zktest.Start(t, zktest.WithSystemProperty("znode.container.checkIntervalMs", "3600000"))
	admin := zktest.Connect(t, srv.Servers())
	first, second := connectTo(t, srv.Servers()), connectTo(t, srv.Servers())
	uses := []recipeUse{mutexUse, writeUse, readUse, semUse, semMutexUse, doubleUse, barrierUse}
	for i, a := range uses {
		for j, b := range uses {
			if a.kind == b.kind || a.kind == "barrier" {
				continue // as in TestRecipesRefuseAPathAnotherUses
			}
			path := "/refused/" + string(rune('a'+i)) + string(rune('a'+j))
			release, err := a.take(bg(), first, path)
			require.NoError(t, err, "%s", a.name)
			before := tree(t, admin, path)
			ctx, cancel := context.WithTimeout(bg(), waitLong)
			_, err = b.take(ctx, second, path)
			cancel()
			require.ErrorIs(t, err, recipes.ErrOtherRecipe, "a %s at a path where a %s holds", b.name, a.name)
			assert.Equal(t, before, tree(t, admin, path), "a refused %s after a %s", b.name, a.name)
			require.NoError(t, release())

			// The path's own recipe takes it again at once.
			release, err = a.take(bg(), first, path)
			require.NoError(t, err, "a %s after a refused %s", a.name, b.name)
			require.NoError(t, release())
		}
	}
}

// TestMixedPathsNameWhatTheyFound: the refusal says which node of which
// recipe it found.
func TestMixedPathsNameWhatTheyFound(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	s := connect(t)
	path := root + "/p"
	m := newMutex(t, s, path)
	held, err := m.Lock(bg())
	require.NoError(t, err)
	sm, err := locks.NewSemaphoreMutex(connect(t), path)
	require.NoError(t, err)
	_, err = sm.Lock(bg())
	require.ErrorIs(t, err, recipes.ErrOtherRecipe)
	assert.Contains(t, err.Error(), "mutex's node")
	assert.Contains(t, err.Error(), "lock-0000000000")
	require.NoError(t, held.Release(bg()))
}

// TestSemaphoreNoticesARecipeArrivingLater: a semaphore lists its path only
// while this session's watch from its last check says the path's children
// changed; a recipe that arrives later without checking (a Curator client:
// here a mutex node made by hand) still has the semaphore refuse the path,
// from the next acquisition that follows the watch's notification.
func TestSemaphoreNoticesARecipeArrivingLater(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/sem"
	s, proxy := connectCounted(t)
	sem, err := locks.NewSemaphore(s, path, 2)
	require.NoError(t, err)
	take := func() error {
		leases, err := sem.Acquire(bg(), 1)
		if err != nil {
			return err
		}
		return leases[0].Release(bg())
	}
	// An acquisition lists the path when its children changed since the
	// last check: the first ones (the leases' container is made after the
	// first check), and any that follows ZooKeeper's reaping of the
	// path's emptied containers between two acquisitions. Between such
	// changes, gate (create, list, delete) and lease (create, list,
	// the watch of its node, delete) are all it sends.
	eventually(t, "an acquisition that does not list the path", func() bool {
		before := proxy.Traffic()
		require.NoError(t, take())
		return proxy.Traffic().Sub(before).Requests == 7
	})

	foreign, err := admin.Create(path+"/_c_00000000-0000-0000-0000-000000000000-lock-", nil, zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	defer func() { require.NoError(t, admin.Delete(foreign, -1)) }()
	eventually(t, "the semaphore to refuse the path", func() bool {
		err := take()
		if err != nil && !errors.Is(err, recipes.ErrOtherRecipe) {
			t.Fatal(err)
		}
		return err != nil
	})
}

// TestRefusalNeedsNoSecondListing: a Mutex at a path another recipe uses is
// refused by the listing sent behind its create, in the create's round trip:
// it lists the path once, never again, and leaves no node.
func TestRefusalNeedsNoSecondListing(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	path := root + "/p"
	sm, err := locks.NewSemaphoreMutex(connect(t), path)
	require.NoError(t, err)
	held, err := sm.Lock(bg())
	require.NoError(t, err)
	s, p := connectCounted(t)
	sent := znode.Of(s).Sent()
	require.NotNil(t, sent, "a Connect session shows the recipes its writes")
	relists := sent.Relists()
	listings := p.Counter(func(op int32, at string) bool { return op == testenv.OpGetChildren2 && at == path })
	_, err = newMutex(t, s, path).Lock(bg())
	require.ErrorIs(t, err, recipes.ErrOtherRecipe)
	assert.EqualValues(t, 1, listings(), "listings of the path")
	assert.Equal(t, relists, sent.Relists(), "acquisitions that listed again after their create")
	require.NoError(t, held.Release(bg()))
}
