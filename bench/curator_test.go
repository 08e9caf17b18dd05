package bench_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/layout"
	"github.com/zkrecipes/recipes/internal/seqnode"
	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/internal/testenv/curatortest"
	"github.com/zkrecipes/recipes/locks"
)

// The throughput benchmarks against Curator run every client loop for a
// warm-up that is not counted, then for window, on both sides alike (the
// Java peer warms up for the same second).
const (
	countAfter = time.Second
	window     = 3 * time.Second
)

// BenchmarkReadHeavy has 8 clients, each on its own session, take a
// read/write lock and release it at once, 90% of the time for reading:
// locks.RWMutex against Curator's InterProcessReadWriteLock. It reports ops/s
// and, for ours, reqs/op and watches/op.
func BenchmarkReadHeavy(b *testing.B) {
	const clients, readPercent = 8, 90
	b.Run("rwmutex", func(b *testing.B) {
		_, root := newRoot(b)
		path := root + "/rw"
		throughput(b, clients, func(sess *recipes.Session, p *testenv.Proxy) (func() (kind, error), error) {
			rw, err := locks.NewRWMutex(sess, path)
			if err != nil {
				return nil, err
			}
			// A reader that finds a writer ahead of it must watch it
			// (a read of the writer's node, with a watch): the round
			// trip after its listing that a read pays when it queues.
			writerWatches := p.Counter(func(op int32, node string) bool {
				return (op == testenv.OpGetData || op == testenv.OpExists) && strings.Contains(node, layout.WriteLockName) &&
					!strings.HasSuffix(node, seqnode.MarkOf(""))
			})
			return func() (kind, error) {
				k, lock := kind{name: "read"}, rw.RLock
				write := rand.IntN(100) >= readPercent
				if write {
					k, lock = kind{name: "write"}, rw.Lock
				}
				before := writerWatches()
				held, err := lock(context.Background())
				if err != nil {
					return k, err
				}
				k.queued = !write && writerWatches() > before
				return k, held.Release(context.Background())
			}, nil
		})
	})
	b.Run("curator", func(b *testing.B) {
		_, root := newRoot(b)
		curator(b, newProxy(b), "bench-rw", root+"/rw", strconv.Itoa(clients), secs(window), strconv.Itoa(readPercent))
	})
}

// BenchmarkSemaphore has 16 clients, each on its own session, take one of 4
// leases and give it back at once: locks.Semaphore against Curator's
// InterProcessSemaphoreV2.
func BenchmarkSemaphore(b *testing.B) {
	const clients, leases = 16, 4
	b.Run("semaphore", func(b *testing.B) {
		_, root := newRoot(b)
		path := root + "/sem"
		throughput(b, clients, func(sess *recipes.Session, _ *testenv.Proxy) (func() (kind, error), error) {
			sem, err := locks.NewSemaphore(sess, path, leases)
			if err != nil {
				return nil, err
			}
			lease := kind{name: "lease"}
			return func() (kind, error) {
				ls, err := sem.Acquire(context.Background(), 1)
				if err != nil {
					return lease, err
				}
				return lease, ls[0].Release(context.Background())
			}, nil
		})
	})
	b.Run("curator", func(b *testing.B) {
		_, root := newRoot(b)
		curator(b, newProxy(b), "bench-semaphore", root+"/sem", strconv.Itoa(leases), strconv.Itoa(clients), secs(window))
	})
}

// BenchmarkContendedCurator is BenchmarkContended's 8 contenders with
// Curator's InterProcessMutex, for a third baseline. It reports handoffs/s
// over the peer's counted window and, per acquisition, the requests, round
// trips and watch notifications over its whole run (curatorMutex).
func BenchmarkContendedCurator(b *testing.B) {
	b.ReportMetric(curatorMutex(b, contenders), "handoffs/s")
}

// curatorMutex runs the Java peer's bench-mutex with clients clients and
// returns its acquisitions per second; it reports, per acquisition over its
// whole run (warm-up included), its requests, round trips and watch
// notifications, counting an acquisition per lock node created.
func curatorMutex(b *testing.B, clients int) float64 {
	b.Helper()
	admin, root := newRoot(b)
	path := root + "/mutex"
	// Persistent and made beforehand, so that every lock node is created at
	// the first try: one create is one acquisition.
	ensurePersistent(b, admin, path)
	removeAtEnd(b, admin, root)
	p := newProxy(b)
	acquisitions := p.Counter(func(op int32, node string) bool {
		return (op == testenv.OpCreate || op == testenv.OpCreate2) && strings.HasPrefix(node, path+"/")
	})
	before := p.Traffic()
	rate := curatorRate(b, p, "bench-mutex", path, strconv.Itoa(clients), secs(window))
	reportTraffic(b, int(acquisitions()), p.Traffic().Sub(before))
	return rate
}

func secs(d time.Duration) string { return strconv.Itoa(int(d / time.Second)) }

// A kind of operation of a throughput benchmark ("read", "write",
// "lease"), and whether this one queued (only reads say).
type kind struct {
	name   string
	queued bool
}

// throughput connects clients sessions, each through a proxy of its own,
// makes each one's operation with setup, runs them all in a loop for
// countAfter and then window, and reports the operations per second of the
// window, with the requests, round trips and watch notifications per
// operation summed over all sessions. The round trips are also reported
// per operation of each kind (rtts/read), each operation counting its
// session's round trips from its start to its end, and, for a kind whose
// operations say whether they queued, the share that did (queued/read).
func throughput(b *testing.B, clients int, setup func(*recipes.Session, *testenv.Proxy) (func() (kind, error), error)) {
	b.Helper()
	type client struct {
		p  *testenv.Proxy
		op func() (kind, error)
	}
	cs := make([]client, 0, clients)
	for range clients {
		p := newProxy(b)
		op, err := setup(connect(b, p), p)
		if err != nil {
			b.Fatal(err)
		}
		cs = append(cs, client{p, op})
	}
	traffic := func() testenv.Traffic {
		var t testenv.Traffic
		for _, c := range cs {
			t = t.Add(c.p.Traffic())
		}
		return t
	}
	var total float64
	var sum testenv.Traffic
	var count int64
	kinds := newKindCounts()
	for range b.N {
		var counted atomic.Int64
		var failure atomic.Pointer[error]
		start := time.Now().Add(countAfter)
		end := start.Add(window)
		var before testenv.Traffic
		var once sync.Once
		var wg sync.WaitGroup
		for _, c := range cs {
			wg.Go(func() {
				for now := time.Now(); now.Before(end) && failure.Load() == nil; now = time.Now() {
					counting := !now.Before(start)
					if counting {
						once.Do(func() { before = traffic() })
					}
					from := c.p.Traffic().RoundTrips
					k, err := c.op()
					if err != nil {
						failure.Store(&err)
						return
					}
					if counting {
						counted.Add(1)
						kinds.add(k, c.p.Traffic().RoundTrips-from)
					}
				}
			})
		}
		wg.Wait()
		if err := failure.Load(); err != nil {
			b.Fatal(*err)
		}
		sum = sum.Add(traffic().Sub(before))
		total += float64(counted.Load()) / window.Seconds()
		count += counted.Load()
	}
	b.ReportMetric(total/float64(b.N), "ops/s")
	reportTraffic(b, int(count), sum)
	kinds.report(b)
}

// kindCounts sums operations, the queued ones and round trips by kind of
// operation, for throughput.
type kindCounts struct {
	mu     sync.Mutex
	ops    map[string]int64
	queued map[string]int64
	rtts   map[string]int64
}

func newKindCounts() *kindCounts {
	return &kindCounts{ops: map[string]int64{}, queued: map[string]int64{}, rtts: map[string]int64{}}
}

func (k *kindCounts) add(op kind, rtts int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.ops[op.name]++
	k.rtts[op.name] += rtts
	if op.queued {
		k.queued[op.name]++
	}
}

// report reports each kind's round trips per operation of that kind and,
// for reads, the share that queued.
func (k *kindCounts) report(b *testing.B) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for name, n := range k.ops {
		b.ReportMetric(float64(k.rtts[name])/float64(n), "rtts/"+name)
		if name == "read" {
			b.ReportMetric(float64(k.queued[name])/float64(n), "queued/"+name)
		}
	}
}

// curator runs a bench mode of the Java peer through p once per b.N and
// reports its operations per second. The peer goes through a proxy, as our
// clients do, so that both pay the same hop (and the same delay).
func curator(b *testing.B, p *testenv.Proxy, mode, path string, args ...string) {
	b.Helper()
	b.ReportMetric(curatorRate(b, p, mode, path, args...), "ops/s")
}

// curatorRate runs a bench mode of the Java peer through p once per b.N and
// returns its mean operations per second.
func curatorRate(b *testing.B, p *testenv.Proxy, mode, path string, args ...string) float64 {
	b.Helper()
	peer := curatortest.EnsureT(b)
	servers := p.Addr()
	var total float64
	for range b.N {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		out, err := peer.Run(ctx, append([]string{mode, servers, path}, args...)...)
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		var ops int64
		var seconds float64
		if _, err := fmt.Sscanf(out, "ops=%d seconds=%f", &ops, &seconds); err != nil {
			b.Fatalf("Curator peer printed %q: %v", out, err)
		}
		total += float64(ops) / seconds
	}
	return total / float64(b.N)
}
