package bench_test

import (
	"context"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/internal/znode"
)

// BenchmarkUncontended takes and releases a lock that nobody else wants, one
// session, one goroutine:
//
//   - floor: the least any sequential-node lock can do with go-zookeeper:
//     create our protected ephemeral sequential node, list the directory to
//     see that it is first, delete the node. Three requests, three round
//     trips.
//   - pipelined: the least a lock of these nodes can do on one session,
//     for comparison only: the same three requests, the listing sent
//     behind the create as a Mutex sends it (znode.AfterWrite), so two
//     round trips; nothing checked, nothing watched, no token.
//   - mutex: our locks.Mutex, Lock then Unlock.
//   - zk.Lock: go-zookeeper's own lock, Lock then Unlock.
//   - curator: Curator's InterProcessMutex, acquire then release, by the
//     Java peer's one client (bench-mutex with one client), which counts
//     its own operations over the throughput benchmarks' window: its ns/op
//     is that window over its count, not the benchmark's time.
//
// Each reports reqs/op, rtts/op and watches/op as counted on the session's
// socket.
func BenchmarkUncontended(b *testing.B) {
	runInTurn(b,
		sub{"floor", benchFloor},
		sub{"pipelined", benchPipelined},
		sub{"mutex", benchMutexUncontended},
		sub{"zk.Lock", benchZKLockUncontended},
		sub{"curator", benchCuratorUncontended})
}

// benchCuratorUncontended reports the Java peer's time per acquisition and
// release, and its traffic as BenchmarkContendedCurator does.
func benchCuratorUncontended(b *testing.B) {
	rate := curatorMutex(b, 1)
	if rate <= 0 {
		b.Fatal("the Curator peer made no acquisition")
	}
	b.ReportMetric(1e9/rate, "ns/op")
}

// rawSetup is the floors' session, through the proxy it returns, and their
// lock's directory, a persistent one made beforehand.
func rawSetup(b *testing.B) (*recipes.Session, *testenv.Proxy, string) {
	admin, root := newRoot(b)
	dir := root + "/floor"
	ensurePersistent(b, admin, dir)
	removeAtEnd(b, admin, root)
	p := newProxy(b)
	return connect(b, p), p, dir
}

func benchFloor(b *testing.B) {
	sess, p, dir := rawSetup(b)
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

func benchPipelined(b *testing.B) {
	sess, p, dir := rawSetup(b)
	conn := sess.Conn()
	data := recipes.DefaultData()
	ctx := context.Background()
	list := func(context.Context) error {
		_, _, err := conn.Children(dir)
		return err
	}

	before := p.Traffic()
	for b.Loop() {
		name := dir + "/_c_" + uuid() + "-lock-"
		listed := znode.AfterWrite(ctx, sess, name, list)
		node, err := conn.Create(name, data, zk.FlagEphemeralSequential, acl)
		switch lerr, ok := listed(err); {
		case err != nil:
			b.Fatalf("create: %v", err)
		case !ok:
			b.Fatal("the listing did not go behind the create")
		case lerr != nil:
			b.Fatalf("children: %v", lerr)
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
