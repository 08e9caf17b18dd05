package integration_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/election"
	"github.com/zkrecipes/recipes/locks"
)

// queuedCount is a context whose acquisitions count their WithQueued calls
// and, at each, record how many nodes dirs have.
type queuedCount struct {
	calls atomic.Int32
	nodes atomic.Int32 // dirs' nodes at the last call
}

func (q *queuedCount) ctx(conn *zk.Conn, dirs ...string) context.Context {
	return locks.WithQueued(bg(), func() {
		var n int
		for _, dir := range dirs {
			names, _, _ := conn.Children(dir)
			n += len(names)
		}
		q.nodes.Store(int32(n))
		q.calls.Add(1)
	})
}

// TestWithQueuedTellsEachWaitOnce: an acquisition that waits tells so once,
// when its node is in line; one that waits twice (a semaphore at its gate
// and for a lease, a multi-lock for two members) still once; one that does
// not wait (a free lock, a re-entry, a TryLock) never. A Hold's Context does
// not carry it on.
func TestWithQueuedTellsEachWaitOnce(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	holder, waiter := connect(t), connect(t)
	type taker = func(ctx context.Context) (*locks.Hold, error)
	semaphore := func(path string) func(s *recipes.Session) taker {
		return func(s *recipes.Session) taker { return leaseLocker{newSemaphore(t, s, path, 1)}.Lock }
	}
	rwmutex := func(s *recipes.Session) *locks.RWMutex {
		rw, err := locks.NewRWMutex(s, root+"/rw-read")
		require.NoError(t, err)
		return rw
	}
	for _, c := range []struct {
		name   string
		take   func(s *recipes.Session) taker
		dirs   []string // where the waiter's node is in line
		nodes  int32    // their nodes then, at least: the holder's and the waiter's
		holder *recipes.Session
		hold   func(s *recipes.Session) taker // the holder's, if not take
	}{
		{"mutex", func(s *recipes.Session) taker { return newMutex(t, s, root+"/mutex").Lock }, []string{root + "/mutex"}, 2, holder, nil},
		{"write", func(s *recipes.Session) taker {
			rw, err := locks.NewRWMutex(s, root+"/rw")
			require.NoError(t, err)
			return rw.Lock
		}, []string{root + "/rw"}, 2, holder, nil},
		// The waiter waits for a lease holding the gate (its gate and
		// lease nodes, the holder's lease), or, if the holder's gate
		// delete reached the server after its gate's create, at the gate
		// (its gate node, the holder's lease, and the holder's gate until
		// that delete).
		{"semaphore", semaphore(root + "/sem"), []string{root + "/sem/locks", root + "/sem/leases"}, 2, holder, nil},
		{"latch", func(s *recipes.Session) taker {
			l, err := election.NewLatch(s, root+"/latch", "id")
			require.NoError(t, err)
			return l.Campaign
		}, []string{root + "/latch"}, 2, holder, nil},
		{"read", func(s *recipes.Session) taker { return rwmutex(s).RLock }, []string{root + "/rw-read"}, 2, holder,
			func(s *recipes.Session) taker { return rwmutex(s).Lock }},
		{"selector", func(s *recipes.Session) taker {
			sel, err := election.NewSelector(s, root+"/selector", "id")
			require.NoError(t, err)
			return sel.Campaign
		}, []string{root + "/selector"}, 2, holder, nil},
		{"multilock", func(s *recipes.Session) taker {
			ml, err := locks.NewMultiMutex(s, []string{root + "/m1", root + "/m2"})
			require.NoError(t, err)
			return ml.Lock
		}, []string{root + "/m1"}, 2, holder, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var free queuedCount
			h, err := c.take(waiter)(free.ctx(admin, c.dirs...))
			require.NoError(t, err)
			require.NoError(t, h.Release(bg()))
			assert.Zero(t, free.calls.Load(), "a free lock does not wait")

			hold := c.take
			if c.hold != nil {
				hold = c.hold
			}
			held, err := hold(c.holder)(bg())
			require.NoError(t, err)
			var q queuedCount
			got := make(chan error, 1)
			var h2 *locks.Hold
			go func() {
				var err error
				h2, err = c.take(waiter)(q.ctx(admin, c.dirs...))
				got <- err
			}()
			eventually(t, "the waiter to say it waits", func() bool { return q.calls.Load() > 0 })
			assert.GreaterOrEqual(t, q.nodes.Load(), c.nodes, "its node in line when it says so")
			require.NoError(t, held.Release(bg()))
			require.NoError(t, <-got)
			assert.Equal(t, int32(1), q.calls.Load(), "once per acquisition")

			// The work's context does not carry it: a wait under it is
			// another caller's.
			other, err := newMutex(t, holder, root+"/"+c.name+"-nested").Lock(bg())
			require.NoError(t, err)
			nested := make(chan error, 1)
			go func() {
				n, err := newMutex(t, waiter, root+"/"+c.name+"-nested").Lock(h2.Context())
				if err == nil {
					err = n.Release(bg())
				}
				nested <- err
			}()
			waitQueued(t, admin, root+"/"+c.name+"-nested", 2)
			require.NoError(t, other.Release(bg()))
			require.NoError(t, <-nested)
			require.NoError(t, h2.Release(bg()))
			assert.Equal(t, int32(1), q.calls.Load(), "a Hold's Context does not tell the acquisition's caller")
		})
	}

	// A waiter whose node someone deletes queues again with a new node,
	// still one acquisition: it does not tell twice.
	t.Run("requeue", func(t *testing.T) {
		path := root + "/requeue"
		held, err := newMutex(t, holder, path).Lock(bg())
		require.NoError(t, err)
		var q queuedCount
		got := make(chan error, 1)
		go func() {
			h, err := newMutex(t, waiter, path).Lock(q.ctx(admin, path))
			if err == nil {
				err = h.Release(bg())
			}
			got <- err
		}()
		eventually(t, "the waiter to say it waits", func() bool { return q.calls.Load() > 0 })
		var gone string // the waiter's node
		for _, n := range children(t, admin, path) {
			if path+"/"+n != held.Node() {
				gone = n
			}
		}
		require.NotEmpty(t, gone)
		require.NoError(t, admin.Delete(path+"/"+gone, -1))
		eventually(t, "the waiter to queue again", func() bool {
			names := children(t, admin, path)
			return len(names) == 2 && !slices.Contains(names, gone)
		})
		require.NoError(t, held.Release(bg()))
		require.NoError(t, <-got)
		assert.Equal(t, int32(1), q.calls.Load(), "once per acquisition")
	})

	// Hooks compose: an inner WithQueued's runs, then the outer one's.
	t.Run("nested-hooks", func(t *testing.T) {
		path := root + "/nested-hooks"
		held, err := newMutex(t, holder, path).Lock(bg())
		require.NoError(t, err)
		var order []string
		ctx := locks.WithQueued(locks.WithQueued(bg(), func() { order = append(order, "outer") }), func() { order = append(order, "inner") })
		got := lockAndUnlock(lockerFunc{path, func(context.Context) (*locks.Hold, error) { return newMutex(t, waiter, path).Lock(ctx) }}, nil)
		waitQueued(t, admin, path, 2)
		require.NoError(t, held.Release(bg()))
		require.NoError(t, <-got)
		assert.Equal(t, []string{"inner", "outer"}, order)
	})

	t.Run("try-and-reenter", func(t *testing.T) {
		path := root + "/try"
		held, err := newMutex(t, holder, path).Lock(bg())
		require.NoError(t, err)
		var q queuedCount
		_, ok, err := newMutex(t, waiter, path).TryLock(q.ctx(admin, path))
		require.NoError(t, err)
		assert.False(t, ok)
		// A re-entry does not wait, even with the lock's queue busy.
		again, err := newMutex(t, holder, path).Lock(locks.WithQueued(held.Context(), func() { q.calls.Add(1) }))
		require.NoError(t, err)
		require.NoError(t, again.Release(bg()))
		require.NoError(t, held.Release(bg()))
		assert.Zero(t, q.calls.Load(), "neither TryLock nor a re-entry waits")
	})

	// The third goroutine of one session waits in the process first (the
	// holder and the next in line have nodes), then may wait in ZooKeeper
	// too: it tells once, when it joins the process's queue.
	t.Run("local-queue", func(t *testing.T) {
		path := root + "/local"
		m := newMutex(t, waiter, path)
		held, err := m.Lock(bg())
		require.NoError(t, err)
		next := lockAndUnlock(m, nil)
		waitQueued(t, admin, path, 2)
		var q queuedCount
		got := make(chan error, 1)
		go func() {
			h, err := m.Lock(q.ctx(admin, path))
			if err == nil {
				err = h.Release(bg())
			}
			got <- err
		}()
		eventually(t, "the third goroutine to say it waits", func() bool { return q.calls.Load() > 0 })
		assert.Equal(t, int32(2), q.nodes.Load(), "in line in the process: no node of its own yet")
		require.NoError(t, held.Release(bg()))
		require.NoError(t, <-next)
		require.NoError(t, <-got)
		assert.Equal(t, int32(1), q.calls.Load(), "once per acquisition")
	})
}

// lockerFunc is a Locker made of a function.
type lockerFunc struct {
	path string
	lock func(context.Context) (*locks.Hold, error)
}

func (l lockerFunc) Lock(ctx context.Context) (*locks.Hold, error) { return l.lock(ctx) }
func (l lockerFunc) Path() string                                  { return l.path }
