package bench_test

import (
	"context"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
)

// BenchmarkUncontended takes and releases a lock that nobody else wants, one
// session, one goroutine:
//
//   - floor: the least any sequential-node lock can do with go-zookeeper:
//     create our protected ephemeral sequential node, list the directory to
//     see that it is first, delete the node. Three requests, three round
//     trips.
//   - mutex: our locks.Mutex, Lock then Unlock.
//   - zk.Lock: go-zookeeper's own lock, Lock then Unlock.
//
// Each reports reqs/op and watches/op as counted on the session's socket.
func BenchmarkUncontended(b *testing.B) {
	runInTurn(b,
		sub{"floor", benchFloor},
		sub{"mutex", benchMutexUncontended},
		sub{"zk.Lock", benchZKLockUncontended})
}

func benchFloor(b *testing.B) {
	admin, root := newRoot(b)
	dir := root + "/floor"
	ensurePersistent(b, admin, dir)
	removeAtEnd(b, admin, root)
	p := newProxy(b)
	sess := connect(b, p)
	conn := sess.Conn()
	data := recipes.DefaultData()
	prefix := dir + "/_c_"

	before := p.Traffic()
	for b.Loop() {
		node, err := conn.Create(prefix+uuid()+"-lock-", data, zk.FlagEphemeralSequential, acl)
		if err != nil {
			b.Fatalf("create: %v", err)
		}
		if _, _, err := conn.Children(dir); err != nil {
			b.Fatalf("children: %v", err)
		}
		if err := conn.Delete(node, -1); err != nil {
			b.Fatalf("delete: %v", err)
		}
	}
	reportTraffic(b, b.N, p.Traffic().Sub(before))
}

func benchMutexUncontended(b *testing.B) {
	_, root := newRoot(b)
	p := newProxy(b)
	m := newMutex(b, connect(b, p), root+"/mutex")
	ctx := context.Background()
	lockUnlock := func() {
		held, err := m.Lock(ctx)
		if err != nil {
			b.Fatalf("lock: %v", err)
		}
		if err := held.Release(context.Background()); err != nil {
			b.Fatalf("unlock: %v", err)
		}
	}
	// Once untimed, so that making the lock's directory is not measured.
	lockUnlock()

	before := p.Traffic()
	for b.Loop() {
		lockUnlock()
	}
	reportTraffic(b, b.N, p.Traffic().Sub(before))
}

func benchZKLockUncontended(b *testing.B) {
	admin, root := newRoot(b)
	// zk.Lock makes the lock's directory and its parents persistent.
	removeAtEnd(b, admin, root)
	p := newProxy(b)
	sess := connect(b, p)
	l := zk.NewLock(sess.Conn(), root+"/zklock", acl)
	data := recipes.DefaultData()
	lockUnlock := func() {
		if err := l.LockWithData(data); err != nil {
			b.Fatalf("lock: %v", err)
		}
		if err := l.Unlock(); err != nil {
			b.Fatalf("unlock: %v", err)
		}
	}
	// Once untimed, so that making the lock's directory is not measured.
	lockUnlock()

	before := p.Traffic()
	for b.Loop() {
		lockUnlock()
	}
	reportTraffic(b, b.N, p.Traffic().Sub(before))
}
