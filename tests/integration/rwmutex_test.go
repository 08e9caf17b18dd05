package integration_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/seqnode"
	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/locks"
)

func newRWMutex(t *testing.T, s *recipes.Session, path string) *locks.RWMutex {
	t.Helper()
	rw, err := locks.NewRWMutex(s, path)
	require.NoError(t, err)
	return rw
}

// TestRWMutexWritersAloneReadersShare: 8 clients, 100 iterations each, one
// in ten a write. Writers are always alone; and two readers hold at once.
func TestRWMutexWritersAloneReadersShare(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	const clients, iterations = 8, 100
	tr := newTracker(map[string]int{"W": 1}, "W")
	var wg sync.WaitGroup
	for range clients {
		rw := newRWMutex(t, connect(t), root+"/rw")
		wg.Go(func() {
			for range iterations {
				write := rand.IntN(10) == 0
				lock, kind := rw.RLock, "R"
				if write {
					lock, kind = rw.Lock, "W"
				}
				held, err := lock(bg())
				if !assert.NoError(t, err) {
					return
				}
				tr.enter(kind)
				time.Sleep(time.Millisecond) // the work done under the lock
				tr.leave(kind)
				if !assert.NoError(t, held.Release(bg())) {
					return
				}
			}
		})
	}
	wg.Wait()
	tr.check(t)
	assert.Equal(t, clients*iterations, tr.entriesOf("R")+tr.entriesOf("W"))

	// Readers share: a second session's reader gets in while one holds.
	ctx, cancel := context.WithTimeout(bg(), waitLong)
	defer cancel()
	first, err := newRWMutex(t, connect(t), root+"/rw").RLock(ctx)
	require.NoError(t, err)
	second, err := newRWMutex(t, connect(t), root+"/rw").RLock(ctx)
	require.NoError(t, err, "a reader waited for a reader")
	require.NoError(t, second.Release(bg()))
	require.NoError(t, first.Release(bg()))
}

// TestRWMutexWriteReadWriteQueue queues a writer, a reader and a writer
// behind a writer: all are served, in order.
func TestRWMutexWriteReadWriteQueue(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/rw"
	first := newRWMutex(t, connect(t), path)
	held, err := first.Lock(bg())
	require.NoError(t, err)

	order := make(chan string, 3)
	var wg sync.WaitGroup
	for i, kind := range []string{"W1", "R", "W2"} {
		rw := newRWMutex(t, connect(t), path)
		lock := rw.Lock
		if kind == "R" {
			lock = rw.RLock
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(bg(), waitLong)
			defer cancel()
			h, err := lock(ctx)
			if !assert.NoError(t, err) {
				return
			}
			order <- kind
			assert.NoError(t, h.Release(bg()))
		})
		waitQueued(t, admin, path, i+2)
	}
	require.NoError(t, held.Release(bg()))
	wg.Wait()
	close(order)
	var got []string
	for k := range order {
		got = append(got, k)
	}
	assert.Equal(t, []string{"W1", "R", "W2"}, got)
}

// TestRWMutexDowngrade takes the write lock, then the read lock, then lets
// the write lock go: a writer queued meanwhile must stay blocked until the
// read lock is released too (Curator's CURATOR-621).
func TestRWMutexDowngrade(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/rw"
	rw := newRWMutex(t, connect(t), path)
	w, err := rw.Lock(bg())
	require.NoError(t, err)

	writer := newRWMutex(t, connect(t), path)
	var writerIn atomic.Bool
	got := lockAndUnlock(writer, &writerIn)
	waitQueued(t, admin, path, 2)

	r, err := rw.RLock(w.Context())
	require.NoError(t, err)
	require.Len(t, children(t, admin, path), 3)
	require.NoError(t, w.Release(bg()))
	assert.NoError(t, r.Err(), "releasing the write lock ended the downgraded read lock's context")
	ps, err := rw.Participants(bg())
	require.NoError(t, err)
	readers, writers := byKind(ps)
	require.Len(t, readers, 1)
	require.Len(t, writers, 1)
	seq := func(p string) string { return p[len(p)-10:] }
	assert.Less(t, seq(readers[0].Path), seq(writers[0].Path), "the downgraded read node must sort ahead of the queued writer")
	// The writer will hold after the read hold, with its node's creation
	// zxid as its token, although its node is older than the read node.
	assert.Equal(t, w.Token(), r.Token(), "the read hold holds at the write node's place")
	assert.Greater(t, writers[0].Token, r.Token(), "the writer after the read hold would have a smaller token")
	// The read node sorts ahead of the queued writer, which therefore still
	// waits; ask the writer's own session, which has seen the release.
	_, err = writer.Participants(bg())
	require.NoError(t, err)
	assert.False(t, writerIn.Load(), "a writer got in while the downgraded read lock was held")

	require.NoError(t, r.Release(bg()))
	require.NoError(t, <-got)
	assert.True(t, writerIn.Load())
}

// TestRWMutexDowngradedHoldIsFull: after a downgrade and the write lock's
// release, the read Hold has the write hold's token, its own guard, guarded
// Multi and revocation, and its context lives on.
func TestRWMutexDowngradedHoldIsFull(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/rw"
	s := connect(t)
	rw := newRWMutex(t, s, path)
	w, err := rw.Lock(bg())
	require.NoError(t, err)
	r, err := rw.RLock(w.Context())
	require.NoError(t, err)
	require.NoError(t, w.Release(bg()))
	require.ErrorIs(t, w.Err(), locks.ErrReleased)

	require.NoError(t, r.Err())
	require.NoError(t, r.Context().Err(), "the write Release cancelled the read hold's context")
	ps, err := rw.Participants(bg())
	require.NoError(t, err)
	readers, writers := byKind(ps)
	require.Len(t, readers, 1)
	require.Empty(t, writers)
	assert.Equal(t, readers[0].Path, r.Node())
	assert.Equal(t, w.Token(), r.Token(), "the read hold holds at the write node's place")
	assert.Greater(t, readers[0].Token, r.Token(), "the read node was created after the write node")
	guards := r.Guard()
	require.Len(t, guards, 1)
	assert.Equal(t, readers[0].Path, guards[0].Path)
	data := root + "/data"
	_, err = r.Multi(bg(), &zk.CreateRequest{Path: data, Acl: zk.WorldACL(zk.PermAll)})
	require.NoError(t, err, "the read hold's guarded Multi")
	ok, _, err := admin.Exists(data)
	require.NoError(t, err)
	assert.True(t, ok)
	require.NoError(t, admin.Delete(data, -1))

	// Its context still re-enters the read lock, and refuses the write lock.
	r2, err := rw.RLock(r.Context())
	require.NoError(t, err)
	assert.Same(t, r, r2)
	require.NoError(t, r2.Release(bg()))
	_, err = rw.Lock(r.Context())
	assert.ErrorIs(t, err, locks.ErrUpgrade)

	require.NoError(t, locks.Revoke(bg(), s, r.Node()))
	select {
	case <-r.Revoked():
	case <-time.After(waitLong):
		t.Fatal("the downgraded read hold did not hear the revocation request")
	}
	require.NoError(t, r.Release(bg()))
	assert.Empty(t, children(t, admin, path))
}

func TestRWMutexUpgradeRefused(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/rw"
	rw := newRWMutex(t, connect(t), path)
	r, err := rw.RLock(bg())
	require.NoError(t, err)
	_, err = rw.Lock(r.Context())
	assert.ErrorIs(t, err, locks.ErrUpgrade)
	assert.Len(t, children(t, admin, path), 1, "the refused upgrade created a node")
	// Reads re-enter, and the write lock can be taken once the read is gone.
	r2, err := rw.RLock(r.Context())
	require.NoError(t, err)
	require.NoError(t, r2.Release(bg()))
	require.NoError(t, r.Release(bg()))
	w, err := rw.Lock(bg())
	require.NoError(t, err)
	w2, err := rw.Lock(w.Context())
	require.NoError(t, err, "writes re-enter")
	require.NoError(t, w2.Release(bg()))
	require.NoError(t, w.Release(bg()))
}

// byKind splits an RWMutex's participants into readers and writers, each in
// queue order.
func byKind(ps []locks.Participant) (readers, writers []locks.Participant) {
	for _, p := range ps {
		if p.Kind == recipes.KindRead {
			readers = append(readers, p)
		} else {
			writers = append(writers, p)
		}
	}
	return readers, writers
}

// TestRWMutexParticipantsQueueOrder: a reader, a writer and a reader queued
// behind it are listed in queue order with the RWMutex's own rule: the
// first reader holds, the writer waits for it, and the second reader waits
// for the writer (the nearest writer ahead), not for the node just ahead.
func TestRWMutexParticipantsQueueOrder(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/rw"
	rw := newRWMutex(t, connect(t), path)
	r1, err := rw.RLock(bg())
	require.NoError(t, err)
	w := lockAndUnlock(rw, nil)
	waitQueued(t, admin, path, 2)
	r2 := lockAndUnlock(newRWMutex(t, connect(t), path).RLocker(), nil)
	waitQueued(t, admin, path, 3)

	ps, err := newRWMutex(t, connect(t), path).Participants(bg())
	require.NoError(t, err)
	require.Len(t, ps, 3)
	assert.Equal(t, []recipes.Kind{recipes.KindRead, recipes.KindWrite, recipes.KindRead},
		[]recipes.Kind{ps[0].Kind, ps[1].Kind, ps[2].Kind})
	assert.Equal(t, []bool{true, false, false}, []bool{ps[0].Holds, ps[1].Holds, ps[2].Holds})
	assert.Equal(t, r1.Node(), ps[0].Path)
	assert.Empty(t, ps[0].Waits)
	assert.Equal(t, ps[0].Path, ps[1].Waits, "the writer waits for the reader ahead")
	assert.Equal(t, ps[1].Path, ps[2].Waits, "the reader waits for the writer ahead")

	require.NoError(t, r1.Release(bg()))
	require.NoError(t, <-w)
	require.NoError(t, <-r2)
}

// TestRWMutexParticipants: 20 readers hold, 8 writers wait.
func TestRWMutexParticipants(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/rw"
	s := connect(t)
	rw := newRWMutex(t, s, path)
	var readers []*locks.Hold
	for range 20 {
		r, err := rw.RLock(bg())
		require.NoError(t, err)
		readers = append(readers, r)
	}
	var writers []<-chan error
	for range 8 {
		writers = append(writers, lockAndUnlock(rw, nil))
	}
	waitQueued(t, admin, path, 28)
	ps, err := newRWMutex(t, connect(t), path).Participants(bg())
	require.NoError(t, err)
	rs, ws := byKind(ps)
	assert.Len(t, rs, 20)
	assert.Len(t, ws, 8)
	for i, p := range ps {
		assert.Equal(t, i < 20, p.Holds, "participant %d", i)
	}
	for _, r := range readers {
		require.NoError(t, r.Release(bg()))
	}
	for _, w := range writers {
		require.NoError(t, <-w)
	}
}

// TestRWMutexWriterNotStarved keeps new readers coming while a writer
// waits: the writer gets in once the readers ahead of it are done, and the
// readers that came after it wait for it.
func TestRWMutexWriterNotStarved(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/rw"
	reader := newRWMutex(t, connect(t), path)
	first, err := reader.RLock(bg())
	require.NoError(t, err)

	writer := newRWMutex(t, connect(t), path)
	writerDone := lockAndUnlock(writer, nil)
	waitQueued(t, admin, path, 2)

	// A stream of readers, each overlapping the next.
	var late atomic.Int32
	stop := make(chan struct{})
	streamDone := make(chan struct{})
	go func() {
		defer close(streamDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(bg(), waitLong)
			r, err := reader.RLock(ctx)
			cancel()
			if err != nil {
				return
			}
			late.Add(1)
			_ = r.Release(bg())
		}
	}()
	eventually(t, "a reader queued behind the writer", func() bool {
		return len(children(t, admin, path)) >= 3
	})
	assert.Zero(t, late.Load(), "a reader that came after the writer got in first")
	require.NoError(t, first.Release(bg()))
	require.NoError(t, <-writerDone, "the writer starved")
	close(stop)
	<-streamDone
}

func TestRWMutexBadInputCreatesNothing(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	s := connect(t)
	for _, p := range []string{"", "rw", root + "/rw/"} {
		_, err := locks.NewRWMutex(s, p)
		assert.ErrorIs(t, err, recipes.ErrInvalid, "%q", p)
	}
	_, err := locks.NewRWMutex(nil, root+"/rw")
	assert.ErrorIs(t, err, recipes.ErrInvalid)
	ok, _, err := admin.Exists(root)
	require.NoError(t, err)
	assert.False(t, ok)
}

// lockInBackgroundWith calls lock in the background and sends its hold, or
// its error.
func lockInBackgroundWith(lock func(context.Context) (*locks.Hold, error)) <-chan lockResult {
	ch := make(chan lockResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(bg(), waitLong)
		defer cancel()
		h, err := lock(ctx)
		ch <- lockResult{h, err}
	}()
	return ch
}

// countListings counts the listings of path that p's session sends.
func countListings(p *testenv.Proxy, path string) func() int64 {
	return p.Counter(func(op int32, at string) bool {
		return (op == testenv.OpGetChildren || op == testenv.OpGetChildren2) && at == path
	})
}

// TestRWMutexWriterWaitsForEveryReaderAtOnce: a writer queued behind
// readers alone watches each of them, with its own node, in one round
// trip, and holds once the last has gone, whatever the order they go in,
// with no listing after its first (only a writer ahead could put a node
// ahead of it, by downgrading).
func TestRWMutexWriterWaitsForEveryReaderAtOnce(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/rw"
	var readers []*locks.Hold
	for range 3 {
		h, err := newRWMutex(t, connect(t), path).RLock(bg())
		require.NoError(t, err)
		readers = append(readers, h)
	}
	sw, pw := connectCounted(t)
	listings := countListings(pw, path)
	var in atomic.Bool
	got := lockAndUnlock(newRWMutex(t, sw, path), &in)
	waitQueued(t, admin, path, 4)
	nodes := inQueueOrder(t, admin, path)
	eventually(t, "the writer to watch every reader and its own node", func() bool {
		for _, n := range nodes {
			if !watchedBy(t, n, sw.ID()) {
				return false
			}
		}
		return true
	})
	for _, i := range []int{1, 2, 0} { // not in queue order
		require.False(t, in.Load(), "the writer got in while a reader held")
		require.NoError(t, readers[i].Release(bg()))
	}
	require.NoError(t, <-got)
	assert.True(t, in.Load())
	assert.EqualValues(t, 1, listings(), "the writer's listings")
}

// TestRWMutexReaderWaitsForEveryWriterAhead: a reader queued behind two
// writers watches both in one round trip and, once both are gone, holds
// with no listing after its first.
func TestRWMutexReaderWaitsForEveryWriterAhead(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/rw"
	w1, err := newRWMutex(t, connect(t), path).Lock(bg())
	require.NoError(t, err)
	w2 := lockInBackgroundWith(newRWMutex(t, connect(t), path).Lock)
	waitQueued(t, admin, path, 2)
	sr, pr := connectCounted(t)
	listings := countListings(pr, path)
	r := lockInBackgroundWith(newRWMutex(t, sr, path).RLock)
	waitQueued(t, admin, path, 3)
	nodes := inQueueOrder(t, admin, path)
	eventually(t, "the reader to watch both writers", func() bool {
		return watchedBy(t, nodes[0], sr.ID()) && watchedBy(t, nodes[1], sr.ID())
	})

	require.NoError(t, w1.Release(bg()))
	second := <-w2
	require.NoError(t, second.err)
	select {
	case got := <-r:
		t.Fatalf("the reader got in while a writer held (err %v)", got.err)
	default:
	}
	require.NoError(t, second.hold.Release(bg()))
	got := <-r
	require.NoError(t, got.err)
	require.NoError(t, got.hold.Release(bg()))
	assert.EqualValues(t, 1, listings(), "the reader's listings")
}

// TestRWMutexWriterHandOffIsMarked: a write hold is the lowest node, so its
// release is marked as a Mutex's is, and the writer queued right behind it
// holds with no listing after its first; unless the hold downgraded
// (TestRWMutexDowngrade): then the release is not marked.
func TestRWMutexWriterHandOffIsMarked(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/rw"
	w1, err := newRWMutex(t, connect(t), path).Lock(bg())
	require.NoError(t, err)
	sw, pw := connectCounted(t)
	listings := countListings(pw, path)
	w2 := lockInBackgroundWith(newRWMutex(t, sw, path).Lock)
	waitQueued(t, admin, path, 2)
	nodes := inQueueOrder(t, admin, path)
	eventually(t, "the second writer to watch the first one's mark", func() bool {
		return watchedBy(t, seqnode.MarkOf(nodes[0]), sw.ID())
	})
	require.NoError(t, w1.Release(bg()))
	got := <-w2
	require.NoError(t, got.err)
	require.NoError(t, got.hold.Release(bg()))
	assert.EqualValues(t, 1, listings(), "the second writer's listings")
	eventually(t, "no session to watch a mark", func() bool { return !marksWatched(t, root) })
}
