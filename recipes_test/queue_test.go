package recipes_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/layout"
	"github.com/zkrecipes/recipes/internal/seqnode"
	"github.com/zkrecipes/recipes/locks"
)

// queued returns how many goroutines of s are queued for the mutex at path in
// this process, its holder included.
func queued(s *recipes.Session, path string) int {
	return seqnode.LocalQueued(s, seqnode.Spec{Dir: path, Prefix: layout.MutexLockName})
}

// grants records who entered a lock, in order, and checks that nobody else
// was inside at the time and that each holder's token is larger than the
// one before.
type grants struct {
	t         *testing.T
	inside    atomic.Int32
	mu        sync.Mutex
	order     []int
	lastToken int64
}

// enter records that waiter i holds h, stays inside for hold, and releases h.
// A waiter that may lose its session (mayLose) may find its hold lost when it
// releases it.
func (g *grants) enter(i int, h *locks.Hold, hold time.Duration, mayLose bool) {
	if n := g.inside.Add(1); n != 1 {
		g.t.Errorf("waiter %d entered with %d inside", i, n-1)
	}
	g.mu.Lock()
	if h.Token() <= g.lastToken {
		g.t.Errorf("waiter %d: token %d after %d", i, h.Token(), g.lastToken)
	}
	g.order, g.lastToken = append(g.order, i), h.Token()
	g.mu.Unlock()
	if hold > 0 {
		time.Sleep(hold) // the work done while holding
	}
	g.inside.Add(-1)
	if err := h.Release(bg()); err != nil && !(mayLose && errors.Is(err, locks.ErrLockLost)) {
		g.t.Errorf("waiter %d: release: %v", i, err)
	}
}

// localQueue is a Mutex held by one goroutine of a session, for others of
// that session to queue behind.
type localQueue struct {
	admin *zk.Conn
	path  string
	sess  *recipes.Session
	mutex *locks.Mutex
	first *locks.Hold
}

func newLocalQueue(t *testing.T) localQueue {
	admin, root := newRoot(t)
	q := localQueue{admin: admin, path: root + "/lock", sess: connect(t)}
	q.mutex = newMutex(t, q.sess, q.path)
	var err error
	q.first, err = q.mutex.Lock(bg())
	require.NoError(t, err)
	return q
}

// TestLocalQueueFIFO: a thousand goroutines queued on one Mutex through one
// session are served in the order they queued, one at a time, with growing
// tokens, while the session never has more than two nodes in ZooKeeper.
func TestLocalQueueFIFO(t *testing.T) {
	t.Parallel()
	q := newLocalQueue(t)
	admin, path, s, m := q.admin, q.path, q.sess, q.mutex

	const waiters = 1000
	g := &grants{t: t}
	var done sync.WaitGroup
	for i := range waiters {
		done.Go(func() {
			h, err := m.Lock(bg())
			if !assert.NoError(t, err, "waiter %d", i) {
				return
			}
			g.enter(i, h, 0, false)
		})
		eventually(t, "the waiter to queue", func() bool { return queued(s, path) == i+2 })
	}
	assert.Len(t, children(t, admin, path), 2, "the holder's node and the next in line's")
	require.NoError(t, q.first.Release(bg()))
	done.Wait()
	for i, w := range g.order {
		if !assert.Equal(t, i, w, "served out of order") {
			break
		}
	}
	assert.Len(t, g.order, waiters)
	assert.Zero(t, queued(s, path), "the local queue is gone with its last user")
}

// A fate is what becomes of a waiter while it is queued.
type fate int

const (
	waits    fate = iota // waits for its turn, holds and releases
	cancels              // its ctx is cancelled at some point
	timesOut             // its ctx has a deadline somewhere in the queue's drain
	expires              // (separate sessions only) its session is cut off until it expires
)

// seeded returns a random source whose seed the test logs, to replay a
// failure.
func seeded(t *testing.T) *rand.Rand {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, 0))
}

func randomFate(r *rand.Rand, withExpiry bool) fate {
	n := 3
	if withExpiry {
		n = 4
	}
	if r.IntN(2) == 0 {
		return waits
	}
	return fate(1 + r.IntN(n-1))
}

// TestLocalQueueCancelAndTimeout: goroutines of one session that give up at
// random points of the queue leave it without holding, and the others are
// still served in order, one at a time.
func TestLocalQueueCancelAndTimeout(t *testing.T) {
	t.Parallel()
	q := newLocalQueue(t)
	admin, path, s, m := q.admin, q.path, q.sess, q.mutex

	const waiters = 200
	const hold = 2 * time.Millisecond
	r, g := seeded(t), &grants{t: t}
	var done sync.WaitGroup
	var gaveUp atomic.Int32
	for i := range waiters {
		ctx, cancel := context.WithCancel(bg())
		f := randomFate(r, false)
		switch f {
		case cancels:
			after := time.Duration(r.IntN(waiters)) * hold
			time.AfterFunc(after, cancel)
		case timesOut:
			ctx, cancel = context.WithTimeout(ctx, time.Duration(r.IntN(waiters))*hold)
		}
		done.Go(func() {
			defer cancel()
			h, err := m.Lock(ctx)
			if err != nil {
				if f == waits || !errors.Is(err, ctx.Err()) {
					t.Errorf("waiter %d (fate %d): %v", i, f, err)
				}
				gaveUp.Add(1)
				return
			}
			g.enter(i, h, hold, false)
		})
		eventually(t, "the waiter to queue or give up", func() bool {
			return queued(s, path)+int(gaveUp.Load()) == i+2
		})
	}
	require.NoError(t, q.first.Release(bg()))
	done.Wait()
	assert.IsIncreasing(t, g.order, "served out of order")
	assert.Equal(t, waiters, len(g.order)+int(gaveUp.Load()))
	assert.Empty(t, children(t, admin, path), "a node was left behind")
}

// TestQueueAcrossSessions: waiters on separate sessions, queued in
// ZooKeeper behind a holder, cancel, time out or lose their session at
// random points while the queue drains; the others are served in the order
// they queued, one at a time, with growing tokens. A waiter second in line
// takes the lock from the holder's delete alone (the hand-off without a
// listing); others read the queue again first.
func TestQueueAcrossSessions(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/lock"
	first, err := newMutex(t, connect(t), path).Lock(bg())
	require.NoError(t, err)

	const waiters = 24
	const hold = 20 * time.Millisecond
	r, g := seeded(t), &grants{t: t}
	var done sync.WaitGroup
	var gaveUp atomic.Int32
	var stalls []func() // the expiries, started with the drain
	for i := range waiters {
		f := randomFate(r, true)
		s, proxy := connectCounted(t)
		ctx, cancel := context.WithCancel(bg())
		after := time.Duration(r.IntN(waiters)) * hold
		switch f {
		case cancels:
			time.AfterFunc(after, cancel)
		case timesOut:
			ctx, cancel = context.WithTimeout(ctx, after)
		case expires:
			stalls = append(stalls, func() { time.AfterFunc(after, proxy.Stall) })
		}
		m := newMutex(t, s, path)
		done.Go(func() {
			defer cancel()
			h, err := m.Lock(ctx)
			if err != nil {
				if f == waits {
					t.Errorf("waiter %d: %v", i, err)
				}
				gaveUp.Add(1)
				return
			}
			if f == expires && s.Err() != nil {
				return // it held, but its session ended before it could say so
			}
			g.enter(i, h, hold, f == expires)
		})
		eventually(t, "the waiter to queue or give up", func() bool {
			return len(children(t, admin, path))+int(gaveUp.Load()) == i+2
		})
	}
	for _, stall := range stalls {
		stall()
	}
	require.NoError(t, first.Release(bg()))
	done.Wait()
	assert.IsIncreasing(t, g.order, "served out of order")
	eventually(t, "the expired sessions' nodes to go", func() bool { return len(children(t, admin, path)) == 0 })
}
