package bench_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/internal/testenv/curatortest"
	"github.com/zkrecipes/recipes/locks"
	"github.com/zkrecipes/recipes/zktest"
)

// What BenchmarkCapacity works: a 3-member ensemble of its own, 32
// sessions, 100 lock paths.
const (
	capacityMembers = 3
	capacityClients = 32
	capacityPaths   = 100
)

// BenchmarkCapacity measures what one ensemble serves: 32 sessions, each
// with a goroutine (a thread of the Java peer's, for Curator) that takes
// and releases the lock of one of 100 paths at random, as fast as it can,
// for a second's warm-up and then the window (3 s), on an ensemble warmed
// up beforehand (warmEnsemble). Session i reaches member i mod 3 (Curator's
// clients pick one at random) through a proxy per member, which counts
// the traffic. It reports ops/s (lock and release pairs per second, over
// the window) and, over the warm-up and the window, server-us/op (the CPU
// time of the three members' processes per operation, in µs) and reqs/op,
// rtts/op and watches/op (summed over the sessions), and for all but
// Curator client-us/op, the CPU time of this process (the clients and the
// proxies) per operation, and syncs/op, our sessions' probes (0 for plain
// connections). "floor" is the ensemble's own rate of the same
// writes with nothing else: a create of an ephemeral
// sequential node under the path and its delete; "listed" the same with a
// listing of the path between them, the least a lock of sequential nodes
// can ask (it must see that its node is first), and "listed-watched" with
// a watch set by that listing, as a Mutex's; "mutex" our Mutex,
// "zk.Lock" go-zookeeper's, on plain go-zookeeper connections, and
// "curator" Curator's InterProcessMutex, whose figures but ops/s also
// count its 32 clients' connecting.
func BenchmarkCapacity(b *testing.B) {
	e, err := testenv.StartEnsemble(capacityMembers, testenv.WithConfig("forceSync", "yes"),
		testenv.WithSystemProperty("zookeeper.forceSync", "yes"),
		testenv.WithSystemProperty("znode.container.checkIntervalMs", "60000"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close() })
	warmEnsemble(b, e)
	runInTurn(b,
		sub{"floor", func(b *testing.B) {
			capacity(b, e, func(conn *zk.Conn, paths []string) (func(int) error, error) {
				return func(i int) error {
					node, err := conn.Create(paths[i]+"/n-", nil, zk.FlagEphemeralSequential, acl)
					if err != nil {
						return err
					}
					return conn.Delete(node, -1)
				}, nil
			})
		}},
		sub{"listed", func(b *testing.B) { capacity(b, e, listedOp(false)) }},
		sub{"listed-watched", func(b *testing.B) { capacity(b, e, listedOp(true)) }},
		sub{"mutex", func(b *testing.B) {
			capacityOf(b, e, func(sess *recipes.Session, paths []string) (func(int) error, error) {
				ms := make([]*locks.Mutex, len(paths))
				for i, p := range paths {
					m, err := locks.NewMutex(sess, p)
					if err != nil {
						return nil, err
					}
					ms[i] = m
				}
				return func(i int) error {
					h, err := ms[i].Lock(context.Background())
					if err != nil {
						return err
					}
					return h.Release(context.Background())
				}, nil
			})
		}},
		sub{"zk.Lock", func(b *testing.B) {
			capacity(b, e, func(conn *zk.Conn, paths []string) (func(int) error, error) {
				data := recipes.DefaultData()
				ls := make([]*zk.Lock, len(paths))
				for i, p := range paths {
					ls[i] = zk.NewLock(conn, p, acl)
				}
				return func(i int) error {
					if err := ls[i].LockWithData(data); err != nil {
						return err
					}
					return ls[i].Unlock()
				}, nil
			})
		}},
		sub{"curator", func(b *testing.B) { capacityCurator(b, e) }})
}

// listedOp is the least any lock of sequential nodes asks of the ensemble:
// the floor's create and delete, and the listing between them that shows
// the node first, with a watch on the directory if watched (which the
// delete then fires).
func listedOp(watched bool) func(conn *zk.Conn, paths []string) (func(int) error, error) {
	return func(conn *zk.Conn, paths []string) (func(int) error, error) {
		return func(i int) error {
			node, err := conn.Create(paths[i]+"/n-", nil, zk.FlagEphemeralSequential, acl)
			if err != nil {
				return err
			}
			if watched {
				_, _, _, err = conn.ChildrenW(paths[i])
			} else {
				_, _, err = conn.Children(paths[i])
			}
			if err != nil {
				return err
			}
			return conn.Delete(node, -1)
		}, nil
	}
}

// capacityWarmUp is how long warmEnsemble exercises the ensemble.
const capacityWarmUp = 15 * time.Second

// warmEnsemble exercises e from capacityClients connections for
// capacityWarmUp with the requests the rows send (creates, listings with
// and without a watch, reads with a watch, deletes plain and in a multi,
// as a release with a mark, and the syncs of our sessions' probes), so
// that no row, the first above all, pays for the
// members' JVMs compiling ZooKeeper's request paths: with a warm-up of
// creates and deletes only, the first row of a pass ran up to a fifth
// slower than it did later in the same run.
func warmEnsemble(b *testing.B, e *testenv.Ensemble) {
	admin, err := plainConn(e.Servers())
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	dir := zktest.TestRoot + "/capacity-warm-up-" + uuid()
	ensurePersistent(b, admin, dir)
	defer func() { _ = zktest.DeleteTree(admin, dir) }()
	conns := make([]*zk.Conn, capacityClients)
	for i := range conns {
		member := i % len(e.Servers())
		conns[i], err = plainConn(e.Servers()[member : member+1])
		if err != nil {
			b.Fatal(err)
		}
		defer conns[i].Close()
	}
	end := time.Now().Add(capacityWarmUp)
	var wg sync.WaitGroup
	for _, conn := range conns {
		wg.Go(func() {
			for n := 0; time.Now().Before(end); n++ {
				node, err := conn.Create(dir+"/n-", nil, zk.FlagEphemeralSequential, acl)
				if err != nil {
					return
				}
				_, _, _ = conn.Children(dir)
				_, _, _, _ = conn.ChildrenW(dir)
				_, _, _, _ = conn.GetW(node)
				_, _, _, _ = conn.ExistsW(node)
				if n%8 == 0 {
					_, _ = conn.Sync(dir)
				}
				if n%2 == 0 {
					_ = conn.Delete(node, -1)
				} else {
					mark := node + ".released"
					_, _ = conn.Multi(&zk.CreateRequest{Path: mark, Acl: acl, Flags: zk.FlagEphemeral},
						&zk.DeleteRequest{Path: mark, Version: -1}, &zk.DeleteRequest{Path: node, Version: -1})
				}
			}
		})
	}
	wg.Wait()
}

// A capacityRun is one sub-benchmark's ensemble, seen through a proxy per
// member, and its own root on it.
type capacityRun struct {
	e       *testenv.Ensemble
	proxies []*testenv.Proxy
	admin   *zk.Conn
	root    string
	paths   []string
}

// newCapacityRun starts the proxies and makes a root whose 100 paths are
// persistent nodes (the floor's and zk.Lock's directories; our Mutex's
// and Curator's parents), removed with everything under them when b
// ends.
func newCapacityRun(b *testing.B, e *testenv.Ensemble) *capacityRun {
	b.Helper()
	r := &capacityRun{e: e, root: zktest.TestRoot + "/capacity-" + uuid()}
	for i := range capacityMembers {
		p := testenv.ProxyTo(b, e.Addr(i))
		p.SetDelay(netDelay)
		r.proxies = append(r.proxies, p)
	}
	r.admin = dialPlain(b, e.Servers())
	for i := range capacityPaths {
		r.paths = append(r.paths, fmt.Sprintf("%s/lock-%03d", r.root, i))
		ensurePersistent(b, r.admin, r.paths[i])
	}
	b.Cleanup(func() {
		if err := zktest.DeleteTree(r.admin, r.root); err != nil {
			b.Errorf("delete %s: %v", r.root, err)
		}
	})
	return r
}

// addrs returns the proxies' addresses, for the Java peer's clients to
// connect to.
func (r *capacityRun) addrs() []string {
	var out []string
	for _, p := range r.proxies {
		out = append(out, p.Addr())
	}
	return out
}

// addrOf returns the address client i connects to: the clients are dealt
// to the members in turn, so that every row puts as many sessions on the
// leader as the others (a client given them all picks one at random, and
// how many reach the leader, whose requests cost the ensemble least,
// moved a row's server-us/op by a tenth from run to run).
func (r *capacityRun) addrOf(i int) []string {
	return []string{r.proxies[i%len(r.proxies)].Addr()}
}

func (r *capacityRun) traffic() testenv.Traffic {
	var t testenv.Traffic
	for _, p := range r.proxies {
		t = t.Add(p.Traffic())
	}
	return t
}

// syncs returns how many syncs the proxies have passed on: our sessions'
// probes.
func (r *capacityRun) syncs() int64 {
	var n int64
	for _, p := range r.proxies {
		n += p.Syncs()
	}
	return n
}

// cpu returns the CPU time the members' processes have used.
func (r *capacityRun) cpu(b *testing.B) time.Duration {
	var sum time.Duration
	for i := range capacityMembers {
		d, err := cpuTime(r.e.PID(i))
		if err != nil {
			b.Fatal(err)
		}
		sum += d
	}
	return sum
}

// report reports the ops per second of the window, and the members' CPU
// and the traffic per operation over all ops.
func (r *capacityRun) report(b *testing.B, rate float64, all int64, cpu time.Duration, traffic testenv.Traffic) {
	b.ReportMetric(rate, "ops/s")
	if all > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(all), "server-us/op")
	}
	reportTraffic(b, int(all), traffic)
}

// capacity runs BenchmarkCapacity's loop with a plain go-zookeeper
// connection per client.
func capacity(b *testing.B, e *testenv.Ensemble, setup func(*zk.Conn, []string) (func(int) error, error)) {
	r := newCapacityRun(b, e)
	r.loop(b, func(i int, paths []string) (func(int) error, error) {
		return setup(dialPlain(b, r.addrOf(i)), paths)
	})
}

// capacityOf runs it with a recipes.Session per client.
func capacityOf(b *testing.B, e *testenv.Ensemble, setup func(*recipes.Session, []string) (func(int) error, error)) {
	r := newCapacityRun(b, e)
	r.loop(b, func(i int, paths []string) (func(int) error, error) {
		ctx, cancel := context.WithTimeout(context.Background(), connectWait)
		defer cancel()
		sess, err := recipes.Connect(ctx, r.addrOf(i))
		if err != nil {
			return nil, err
		}
		b.Cleanup(func() { _ = sess.Close() })
		return setup(sess, paths)
	})
}

// loop connects the clients with connect (given each client's number), then runs them for countAfter
// and window, b.N times, and reports the means.
func (r *capacityRun) loop(b *testing.B, connect func(int, []string) (func(int) error, error)) {
	ops := make([]func(int) error, capacityClients)
	for i := range ops {
		op, err := connect(i, r.paths)
		if err != nil {
			b.Fatal(err)
		}
		ops[i] = op
	}
	var rate float64
	var all atomic.Int64
	var cpu, client time.Duration
	var traffic testenv.Traffic
	var syncs int64
	for range b.N {
		var counted atomic.Int64
		var failure atomic.Pointer[error]
		start := time.Now().Add(countAfter)
		end := start.Add(window)
		cpu0, traffic0, client0, syncs0 := r.cpu(b), r.traffic(), selfCPU(b), r.syncs()
		var wg sync.WaitGroup
		for _, op := range ops {
			wg.Go(func() {
				for now := time.Now(); now.Before(end) && failure.Load() == nil; now = time.Now() {
					if err := op(rand.IntN(len(r.paths))); err != nil {
						failure.Store(&err)
						return
					}
					all.Add(1)
					if !now.Before(start) {
						counted.Add(1)
					}
				}
			})
		}
		wg.Wait()
		if err := failure.Load(); err != nil {
			b.Fatal(*err)
		}
		cpu += r.cpu(b) - cpu0
		client += selfCPU(b) - client0
		traffic = traffic.Add(r.traffic().Sub(traffic0))
		syncs += r.syncs() - syncs0
		rate += float64(counted.Load()) / window.Seconds()
	}
	r.report(b, rate/float64(b.N), all.Load(), cpu, traffic)
	if n := all.Load(); n > 0 {
		b.ReportMetric(float64(client.Microseconds())/float64(n), "client-us/op")
		b.ReportMetric(float64(syncs)/float64(n), "syncs/op")
	}
}

// selfCPU is the CPU time this process has used: the clients', and the
// proxies' that count their traffic.
func selfCPU(b *testing.B) time.Duration {
	d, err := cpuTime(os.Getpid())
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// capacityCurator runs the Java peer's bench-capacity: as many clients,
// each a thread on a CuratorFramework of its own, on the same paths.
func capacityCurator(b *testing.B, e *testenv.Ensemble) {
	r := newCapacityRun(b, e)
	peer := curatortest.EnsureT(b)
	var rate float64
	var all int64
	cpu0, traffic0 := r.cpu(b), r.traffic()
	for range b.N {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		out, err := peer.Run(ctx, "bench-capacity", strings.Join(r.addrs(), ","), r.root,
			strconv.Itoa(capacityPaths), strconv.Itoa(capacityClients), secs(window))
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		var ops, total int64
		var seconds float64
		if _, err := fmt.Sscanf(out, "ops=%d seconds=%f all=%d", &ops, &seconds, &total); err != nil {
			b.Fatalf("Curator peer printed %q: %v", out, err)
		}
		rate += float64(ops) / seconds
		all += total
	}
	r.report(b, rate/float64(b.N), all, r.cpu(b)-cpu0, r.traffic().Sub(traffic0))
}

// dialPlain opens a go-zookeeper connection to servers, closed when b
// ends, and waits for its session.
func dialPlain(b *testing.B, servers []string) *zk.Conn {
	b.Helper()
	conn, err := plainConn(servers)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(conn.Close)
	return conn
}

// plainConn opens a go-zookeeper connection to servers, with a session
// timeout of 10 s, and waits for its session.
func plainConn(servers []string) (*zk.Conn, error) {
	conn, events, err := zk.Connect(servers, 10*time.Second, zk.WithLogger(log.New(io.Discard, "", 0)))
	if err != nil {
		return nil, err
	}
	timeout := time.After(connectWait)
	for {
		select {
		case ev := <-events:
			if ev.State != zk.StateHasSession {
				continue
			}
			go func() {
				for range events { // go-zookeeper panics on a full channel
				}
			}()
			return conn, nil
		case <-timeout:
			conn.Close()
			return nil, fmt.Errorf("no session within %v", connectWait)
		}
	}
}
