package bench_test

import (
	"context"
	"fmt"
	"path"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/seqnode"
	"github.com/zkrecipes/recipes/locks"
)

// contenders is how many clients, each with its own session, fight for the
// lock in BenchmarkContended.
const contenders = 8

// BenchmarkContended has 8 clients, each on its own session, take and
// release one lock as fast as they can, doing nothing while they hold it. An
// op is one acquisition and its release, by whichever client; the goroutines
// do exactly b.N of them between them. Besides ns/op it reports handoffs/s
// (acquisitions per second) and, summed over all sessions and divided by the
// acquisitions, reqs/op and watches/op. The floor sub-benchmark is the
// perfect hand-off (see floorLocker): what no lock of these nodes can beat
// here; marked is the least a safe one can do without a read after its
// wake-up (see markedLocker), and owned the least one that also keeps the
// Mutex's loss promise can do (markedLocker with own).
func BenchmarkContended(b *testing.B) {
	runInTurn(b,
		sub{"mutex", func(b *testing.B) {
			_, root := newRoot(b)
			path := root + "/mutex"
			contend(b, func(sess *recipes.Session) (locker, error) {
				m, err := locks.NewMutex(sess, path)
				return &mutexLocker{m: m}, err
			})
		}},
		sub{"zk.Lock", func(b *testing.B) {
			admin, root := newRoot(b)
			// zk.Lock makes the lock's directory and its parents persistent.
			removeAtEnd(b, admin, root)
			path := root + "/zklock"
			data := recipes.DefaultData()
			contend(b, func(sess *recipes.Session) (locker, error) {
				return &zkLocker{l: zk.NewLock(sess.Conn(), path, acl), data: data}, nil
			})
		}},
		sub{"marked", func(b *testing.B) {
			contendRaw(b, func(l rawLock) locker { return &markedLocker{rawLock: l} })
		}},
		sub{"owned", func(b *testing.B) {
			contendRaw(b, func(l rawLock) locker { return &markedLocker{rawLock: l, own: true} })
		}},
		sub{"floor", func(b *testing.B) {
			contendRaw(b, func(l rawLock) locker { return &floorLocker{l} })
		}})
}

// contendRaw runs contend with lockers made by newLocker over a rawLock
// each, in a persistent directory, with the Mutex's node data.
func contendRaw(b *testing.B, newLocker func(rawLock) locker) {
	admin, root := newRoot(b)
	dir := root + "/lock"
	ensurePersistent(b, admin, dir)
	removeAtEnd(b, admin, root)
	data := recipes.DefaultData()
	contend(b, func(sess *recipes.Session) (locker, error) {
		return newLocker(rawLock{conn: sess.Conn(), dir: dir, data: data}), nil
	})
}

// A locker is one contender's handle on the lock. It is used by one
// goroutine at a time.
type locker interface {
	lock() error
	unlock() error
}

// mutexLocker drives a locks.Mutex.
type mutexLocker struct {
	m    *locks.Mutex
	held *locks.Hold
}

func (l *mutexLocker) lock() error {
	held, err := l.m.Lock(context.Background())
	l.held = held
	return err
}

func (l *mutexLocker) unlock() error { return l.held.Release(context.Background()) }

// zkLocker drives a go-zookeeper zk.Lock, with the same node data as the
// Mutex writes.
type zkLocker struct {
	l    *zk.Lock
	data []byte
}

func (l *zkLocker) lock() error   { return l.l.LockWithData(l.data) }
func (l *zkLocker) unlock() error { return l.l.Unlock() }

// floorLocker is the perfect hand-off, for comparison only: zk.Lock without
// its listing after each wake-up. It creates its node, lists the directory
// once to find the node just ahead, watches it, and holds when it is
// deleted, trusting that deletion to be the end of the hold before it. That
// is unsafe in general (a waiter ahead that gives up or loses its session is
// deleted too, and its successor would hold while the holder still does),
// but here nobody leaves the queue early, so it excludes. A hand-off then
// costs the holder's delete and one notification, the floor issue 10 names,
// with the same writes as every lock of this kind: the most hand-offs per
// second such a lock can make in this benchmark.
type floorLocker struct{ rawLock }

// rawLock is the node of floorLocker and markedLocker: a protected
// ephemeral sequential node, as a Mutex's, made with go-zookeeper directly.
type rawLock struct {
	conn *zk.Conn
	dir  string
	data []byte
	node string
}

// create makes our node.
func (l *rawLock) create() error {
	node, err := l.conn.Create(l.dir+"/_c_"+uuid()+"-lock-", l.data, zk.FlagEphemeralSequential, acl)
	l.node = node
	return err
}

// place lists the directory and returns our place in line (0 first, -1 if
// our node is gone) and the path of the node just ahead, if any.
func (l *rawLock) place() (int, string, error) {
	names, _, err := l.conn.Children(l.dir)
	if err != nil {
		return 0, "", err
	}
	nodes := seqnode.ParseAll(names, "lock-")
	i := seqnode.Index(nodes, path.Base(l.node))
	if i <= 0 {
		return i, "", nil
	}
	return i, l.dir + "/" + nodes[i-1].Name, nil
}

func (l *floorLocker) lock() error {
	if err := l.create(); err != nil {
		return err
	}
	i, ahead, err := l.place()
	if err != nil || i <= 0 {
		return err // first in line (or gone, which the unlock will show)
	}
	ok, _, ev, err := l.conn.ExistsW(ahead)
	if err != nil || !ok {
		return err // an error, or the node ahead is gone already
	}
	if e := <-ev; e.Type != zk.EventNodeDeleted {
		return fmt.Errorf("watch of the node ahead: %v %v", e.Type, e.Err)
	}
	return nil
}

func (l *floorLocker) unlock() error { return l.conn.Delete(l.node, -1) }

// markedLocker is the least a safe lock of these nodes can do without a
// read after its wake-up, for comparison only: floorLocker made safe with
// this library's release marks (internal/seqnode/marks.go), and nothing
// else. A waiter that was not second in line also watches the mark of the
// node ahead, in the same round trip, and holds at that node's deletion only
// if the mark came with it; else it lists again. It releases with the marking
// multi. Unlike a Mutex it does not watch its own node (so no loss
// notification, no fencing token and no check of its own node before it
// trusts a mark) and never writes a mark it did not see, which leaves a
// watch behind in the rare round where a mark watch comes too late: neither
// matters for exclusion here, where nobody's node is deleted by anyone else.
//
// With own it also watches its own node, in the same round trip as its first
// watch of a node ahead, as a Mutex does: what a holder's loss notice and
// fencing token cost, and what a waiter needs to know that its node was not
// deleted before it trusts a mark. (It only sets that watch, and lets it
// fire at its own release: the checks that rest on it are the Mutex's.)
// That makes it the least a lock can do that keeps the Mutex's promises
// without a read after its wake-up.
type markedLocker struct {
	rawLock
	own bool
}

func (l *markedLocker) lock() error {
	if err := l.create(); err != nil {
		return err
	}
	watchOwn := l.own
	for {
		i, ahead, err := l.place()
		if err != nil || i <= 0 {
			return err // first in line (or gone, which the unlock will show)
		}
		marked := make(chan (<-chan zk.Event), 1)
		if i > 1 {
			go func() {
				_, _, ev, _ := l.conn.ExistsW(seqnode.MarkOf(ahead))
				marked <- ev
			}()
		}
		owned := make(chan error, 1)
		if watchOwn {
			go func() {
				_, _, _, err := l.conn.GetW(l.node)
				owned <- err
			}()
		}
		ok, _, ev, err := l.conn.ExistsW(ahead)
		var mark <-chan zk.Event
		if i > 1 {
			mark = <-marked
		}
		if watchOwn {
			watchOwn = false
			if oerr := <-owned; err == nil {
				err = oerr
			}
		}
		if err != nil {
			return err
		}
		if ok {
			if e := <-ev; e.Type != zk.EventNodeDeleted {
				return fmt.Errorf("watch of the node ahead: %v %v", e.Type, e.Err)
			}
		}
		if i == 1 {
			return nil
		}
		select {
		case e := <-mark:
			if e.Type == zk.EventNodeCreated {
				return nil
			}
		default:
		}
	}
}

func (l *markedLocker) unlock() error {
	mark := seqnode.MarkOf(l.node)
	_, err := l.conn.Multi(
		&zk.CreateRequest{Path: mark, Acl: acl, Flags: zk.FlagEphemeral},
		&zk.DeleteRequest{Path: mark, Version: -1},
		&zk.DeleteRequest{Path: l.node, Version: -1})
	return err
}

// contend opens one session per contender, makes each a locker with
// newLocker, and has them share b.N acquisitions.
func contend(b *testing.B, newLocker func(*recipes.Session) (locker, error)) {
	p := newProxy(b) // counts all the contenders
	sessions := make([]*recipes.Session, contenders)
	lockers := make([]locker, contenders)
	for i := range contenders {
		sessions[i] = connect(b, p)
		l, err := newLocker(sessions[i])
		if err != nil {
			b.Fatal(err)
		}
		lockers[i] = l
	}
	// Once untimed, so that making the lock's directory is not measured.
	if err := lockers[0].lock(); err != nil {
		b.Fatalf("warm-up lock: %v", err)
	}
	if err := lockers[0].unlock(); err != nil {
		b.Fatalf("warm-up unlock: %v", err)
	}

	before := p.Traffic()
	var next, acquired atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for i, l := range lockers {
		wg.Go(func() {
			// A contender that fails closes its session, so that whatever
			// node it left behind goes and the others are not stuck.
			for next.Add(1) <= int64(b.N) {
				if err := l.lock(); err != nil {
					b.Errorf("contender %d: lock: %v", i, err)
					_ = sessions[i].Close()
					return
				}
				acquired.Add(1)
				if err := l.unlock(); err != nil {
					b.Errorf("contender %d: unlock: %v", i, err)
					_ = sessions[i].Close()
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()

	if got := acquired.Load(); got != int64(b.N) && !b.Failed() {
		b.Errorf("%d acquisitions, want b.N = %d", got, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "handoffs/s")
	reportTraffic(b, b.N, p.Traffic().Sub(before))
	for _, s := range sessions {
		_ = s.Close()
	}
}
