package integration_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
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
	"github.com/zkrecipes/recipes/zktest"
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
// takes the lock from the holder's delete alone, and one further back from
// the release's mark (the hand-offs without a listing); a waiter whose node
// ahead went unmarked (it gave up or expired) reads the queue again.
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

// watchedBy reports whether the session with id watches path, by the
// server's "wchp" four-letter word.
func watchedBy(t *testing.T, path string, id int64) bool {
	t.Helper()
	return watchedOn(t, zktest.Servers(t)[0], path, id)
}

// watchedOn is watchedBy on the given server.
func watchedOn(t *testing.T, server, path string, id int64) bool {
	t.Helper()
	out := wchp(t, server)
	want := fmt.Sprintf("0x%x", id)
	in := false
	for line := range strings.SplitSeq(out, "\n") {
		switch {
		case strings.HasPrefix(line, "/"):
			in = line == path
		case in && strings.TrimSpace(line) == want:
			return true
		}
	}
	return false
}

// marksWatched reports whether any session watches a release mark below
// root.
func marksWatched(t *testing.T, root string) bool {
	t.Helper()
	out := wchp(t, zktest.Servers(t)[0])
	for line := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(line, root+"/") && strings.HasSuffix(line, ".released") {
			return true
		}
	}
	return false
}

// inQueueOrder returns the full paths of path's lock nodes, oldest first.
func inQueueOrder(t *testing.T, admin *zk.Conn, path string) []string {
	t.Helper()
	names := children(t, admin, path)
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(a[len(a)-10:], b[len(b)-10:]) })
	for i, n := range names {
		names[i] = path + "/" + n
	}
	return names
}

// heldInPersistentDir makes a lock directory below a fresh root, both
// persistent nodes (so that the directory's child version can be read after
// its queue empties: a container may be reaped then), deleted when t ends,
// and takes the mutex there. It returns the admin connection, the lock's
// path and the hold.
func heldInPersistentDir(t *testing.T) (*zk.Conn, string, *locks.Hold) {
	t.Helper()
	admin, root := newRoot(t)
	path := root + "/lock"
	for _, p := range []string{root, path} {
		_, err := admin.Create(p, nil, 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
	}
	t.Cleanup(func() {
		require.NoError(t, admin.Delete(path, -1))
		require.NoError(t, admin.Delete(root, -1))
	})
	first, err := newMutex(t, connect(t), path).Lock(bg())
	require.NoError(t, err)
	return admin, path, first
}

// childVersion reads the child version of the node at path.
func childVersion(t *testing.T, admin *zk.Conn, path string) int32 {
	t.Helper()
	_, st, err := admin.Exists(path)
	require.NoError(t, err)
	return st.Cversion
}

// A lockResult is what a Lock in the background came to.
type lockResult struct {
	hold *locks.Hold
	err  error
}

// lockInBackground takes the mutex at path with s in the background, and
// returns once path has queued lock nodes (the new one among them).
func lockInBackground(t *testing.T, admin *zk.Conn, s *recipes.Session, ctx context.Context, path string, queued int) <-chan lockResult {
	t.Helper()
	ch := make(chan lockResult, 1)
	m := newMutex(t, s, path)
	go func() {
		h, err := m.Lock(ctx)
		ch <- lockResult{h, err}
	}()
	waitQueued(t, admin, path, queued)
	return ch
}

// TestMarkedHandOffTrustsOnlyAHolder: a waiter that was not second in line
// holds at a deletion with no read only when the release marked it
// (seqnode/marks.go). A waiter ahead whose session expires, or that gives
// up, marks nothing, and the one behind does not hold while the holder
// still does; no mark's watch is left behind in any session.
func TestMarkedHandOffTrustsOnlyAHolder(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/lock"
	first, err := newMutex(t, connect(t), path).Lock(bg())
	require.NoError(t, err)

	start := func(s *recipes.Session, ctx context.Context, queued int) <-chan lockResult {
		return lockInBackground(t, admin, s, ctx, path, queued)
	}
	notYet := func(who string, ch <-chan lockResult) {
		select {
		case r := <-ch:
			t.Fatalf("%s took the lock while another held it (err %v)", who, r.err)
		default:
		}
	}
	sa, pa := connectCounted(t)
	start(sa, bg(), 2) // second in line: it would hold at the holder's delete
	sb, pb := connectCounted(t)
	b := start(sb, bg(), 3)
	ctxC, cancelC := context.WithCancel(bg())
	defer cancelC()
	sc := connect(t)
	c := start(sc, ctxC, 4)
	nodes := inQueueOrder(t, admin, path) // holder, A, B, C
	eventually(t, "B and C to watch the marks of the nodes ahead", func() bool {
		return watchedBy(t, seqnode.MarkOf(nodes[1]), sb.ID()) && watchedBy(t, seqnode.MarkOf(nodes[2]), sc.ID())
	})

	// A's session expires while the first holder holds: B, behind it,
	// must read the queue again and wait for the holder.
	pa.Stall()
	eventually(t, "B to wait for the holder", func() bool { return watchedBy(t, nodes[0], sb.ID()) })
	notYet("B", b)

	// C gives up while B waits: its delete writes B's mark, which it
	// watched, so that no watch is left behind.
	cancelC()
	require.ErrorIs(t, (<-c).err, context.Canceled)
	sd := connect(t)
	d := start(sd, bg(), 3) // holder, B, D
	eventually(t, "D to watch B's mark", func() bool { return watchedBy(t, seqnode.MarkOf(nodes[2]), sd.ID()) })
	notYet("D", d)

	// The holder's release hands B the lock with no read: B was second
	// in line when it listed again.
	before := pb.Traffic()
	require.NoError(t, first.Release(bg()))
	rb := <-b
	require.NoError(t, rb.err)
	assert.Zero(t, pb.Traffic().Sub(before).Requests, "B read before it held")
	notYet("D", d)

	// B's release marks its node (and A's, which B watched and never saw
	// marked): D, which was third when it listed, holds.
	require.NoError(t, rb.hold.Release(bg()))
	rd := <-d
	require.NoError(t, rd.err)
	require.NoError(t, rd.hold.Release(bg()))
	eventually(t, "no session to watch a mark", func() bool { return !marksWatched(t, root) })
	eventually(t, "A's expired node to go", func() bool { return len(children(t, admin, path)) == 0 })
}

// TestMarkedHandOffAfterReconnectReads: a waiter whose connection was lost
// since it watched its own node does not hold on the mark alone (after a
// reconnect, go-zookeeper sets the watches again in a request that others
// can overtake, so its own node's deletion may not have reached it yet): it
// reads the queue first, and then holds, in order.
func TestMarkedHandOffAfterReconnectReads(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/lock"
	first, err := newMutex(t, connect(t), path).Lock(bg())
	require.NoError(t, err)

	start := func(s *recipes.Session, queued int) <-chan lockResult {
		return lockInBackground(t, admin, s, bg(), path, queued)
	}
	a := start(connect(t), 2)
	reconnected := make(chan struct{}, 1)
	sb, pb := connectCounted(t, recipes.WithStateListener(func(st recipes.State) {
		if st == recipes.StateReconnected {
			reconnected <- struct{}{}
		}
	}))
	b := start(sb, 3)
	nodes := inQueueOrder(t, admin, path) // holder, A, B
	eventually(t, "B to watch A's mark", func() bool { return watchedBy(t, seqnode.MarkOf(nodes[1]), sb.ID()) })

	lost, _ := sb.Disconnects()
	pb.Cut()
	pb.Restore()
	select {
	case <-reconnected:
	case <-time.After(waitLong):
		t.Fatal("B's session did not reconnect")
	}
	after, counted := sb.Disconnects()
	require.True(t, counted)
	require.Greater(t, after, lost, "the session counts its lost connection")
	eventually(t, "B's watches to be set again", func() bool { return watchedBy(t, seqnode.MarkOf(nodes[1]), sb.ID()) })

	require.NoError(t, first.Release(bg()))
	ra := <-a
	require.NoError(t, ra.err)
	before := pb.Traffic()
	require.NoError(t, ra.hold.Release(bg()))
	rb := <-b
	require.NoError(t, rb.err)
	assert.NotZero(t, pb.Traffic().Sub(before).Requests, "B held on the mark after a reconnect, with no read")
	require.NoError(t, rb.hold.Release(bg()))
}

// TestReleaseMarksWhenSomeoneMayLook: a hold found at once, whose listing
// showed nobody behind it, releases with a plain delete (no waiter can be
// watching its mark: one that lists later finds it first); a hold that
// waited releases with the marking multi. The directory's child version
// shows which: a delete moves it by one, a mark's create and delete by two
// more.
func TestReleaseMarksWhenSomeoneMayLook(t *testing.T) {
	t.Parallel()
	admin, path, first := heldInPersistentDir(t)
	cversion := func() int32 { return childVersion(t, admin, path) }
	second := waitingBehindFirst(t, admin, path)
	before := cversion()
	require.NoError(t, first.Release(bg()))
	r := <-second
	require.NoError(t, r.err)
	assert.Equal(t, before+1, cversion(), "a hold found at once, with nobody behind it when it listed, marked its release")

	before = cversion()
	require.NoError(t, r.hold.Release(bg()))
	assert.Equal(t, before+3, cversion(), "a hold that waited did not mark its release")
}

// waitingBehindFirst starts a Lock of path on a session of its own behind
// the one node there, and returns once it waits: its node is queued and
// its session watches the node ahead. (A Lock whose node is queued may
// still list after the first is gone, and then holds at once.)
func waitingBehindFirst(t *testing.T, admin *zk.Conn, path string) <-chan lockResult {
	t.Helper()
	s := connect(t)
	ch := lockInBackground(t, admin, s, bg(), path, 2)
	first := inQueueOrder(t, admin, path)[0]
	eventually(t, "the second to watch the first", func() bool { return watchedBy(t, first, s.ID()) })
	return ch
}

// TestOwedMarksAreBounded: a waiter owes the mark of each node ahead that
// left unmarked (it writes them when its own node goes, to spend its
// watches), but at most seqnode.MaxOwed of them, so that the multi stays
// small. Here every waiter ahead of it gives up, from the back, one by one.
func TestOwedMarksAreBounded(t *testing.T) {
	t.Parallel()
	admin, path, first := heldInPersistentDir(t)
	const ahead = seqnode.MaxOwed + 1
	cancels := make([]context.CancelFunc, ahead)
	gaveUp := make([]<-chan lockResult, ahead)
	for i := range ahead {
		var ctx context.Context
		ctx, cancels[i] = context.WithCancel(bg())
		defer cancels[i]()
		gaveUp[i] = lockInBackground(t, admin, connect(t), ctx, path, i+2)
	}
	sx := connect(t)
	x := lockInBackground(t, admin, sx, bg(), path, ahead+2)
	nodes := inQueueOrder(t, admin, path) // holder, the others, x
	for i := ahead; i >= 1; i-- {
		eventually(t, "x to watch the mark of the node ahead", func() bool { return watchedBy(t, seqnode.MarkOf(nodes[i]), sx.ID()) })
		cancels[i-1]()
		require.ErrorIs(t, (<-gaveUp[i-1]).err, context.Canceled)
	}
	require.NoError(t, first.Release(bg()))
	r := <-x
	require.NoError(t, r.err)
	before := childVersion(t, admin, path)
	require.NoError(t, r.hold.Release(bg()))
	// Each mark is a create and a delete; then x's own node goes.
	assert.Equal(t, before+2*(seqnode.MaxOwed+1)+1, childVersion(t, admin, path), "marks written by x's release")
}

// TestReleaseWhenAMarkIsRefused: a release whose mark ZooKeeper refuses
// (here a node of the mark's name is in the way) deletes its node plainly:
// the hold is released all the same, and the waiter behind, if any, reads
// the queue.
func TestReleaseWhenAMarkIsRefused(t *testing.T) {
	t.Parallel()
	admin, path, first := heldInPersistentDir(t)
	second := waitingBehindFirst(t, admin, path)
	require.NoError(t, first.Release(bg()))
	r := <-second
	require.NoError(t, r.err) // a hold that waited: it marks its release

	mark := seqnode.MarkOf(r.hold.Node())
	_, err := admin.Create(mark, nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	before := childVersion(t, admin, path)
	require.NoError(t, r.hold.Release(bg()))
	assert.ErrorIs(t, r.hold.Err(), locks.ErrReleased)
	assert.Equal(t, before+1, childVersion(t, admin, path), "the node was not deleted plainly")
	assert.Equal(t, []string{strings.TrimPrefix(mark, path+"/")}, children(t, admin, path))
	require.NoError(t, admin.Delete(mark, -1))
}
