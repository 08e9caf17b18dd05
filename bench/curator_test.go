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
	"github.com/zkrecipes/recipes/internal/curatortest"
	"github.com/zkrecipes/recipes/internal/zktest"
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
		throughput(b, clients, func(sess *recipes.Session) (func() (string, error), error) {
			rw, err := locks.NewRWMutex(sess, path)
			if err != nil {
				return nil, err
			}
			return func() (string, error) {
				kind, lock := "read", rw.RLock
				if rand.IntN(100) >= readPercent {
					kind, lock = "write", rw.Lock
				}
				held, err := lock(context.Background())
				if err != nil {
					return kind, err
				}
				return kind, held.Release(context.Background())
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
		throughput(b, clients, func(sess *recipes.Session) (func() (string, error), error) {
			sem, err := locks.NewSemaphore(sess, path, leases)
			if err != nil {
				return nil, err
			}
			return func() (string, error) {
				ls, err := sem.Acquire(context.Background(), 1)
				if err != nil {
					return "lease", err
				}
				return "lease", ls[0].Release(context.Background())
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
// trips and watch notifications over its whole run (warm-up included), for
// which it counts an acquisition per lock node created.
func BenchmarkContendedCurator(b *testing.B) {
	admin, root := newRoot(b)
	path := root + "/mutex"
	// Persistent and made beforehand, so that every lock node is created at
	// the first try: one create is one acquisition.
	ensurePersistent(b, admin, path)
	removeAtEnd(b, admin, root)
	p := newProxy(b)
	acquisitions := p.Counter(func(op int32, node string) bool {
		return (op == zktest.OpCreate || op == zktest.OpCreate2) && strings.HasPrefix(node, path+"/")
	})
	before := p.Traffic()
	curator(b, p, "bench-mutex", path, strconv.Itoa(contenders), secs(window))
	reportTraffic(b, int(acquisitions()), p.Traffic().Sub(before))
}

func secs(d time.Duration) string { return strconv.Itoa(int(d / time.Second)) }

// throughput connects clients sessions, each through a proxy of its own,
// makes each one's operation with setup, runs them all in a loop for
// countAfter and then window, and reports the operations per second of the
// window, with the requests, round trips and watch notifications per
// operation summed over all sessions. An operation returns its kind ("" if
// the benchmark has one): the round trips of each kind's operations are
// also reported per operation of that kind ("rtts/read"), each operation
// counting its session's round trips from its start to its end.
func throughput(b *testing.B, clients int, setup func(*recipes.Session) (func() (string, error), error)) {
	b.Helper()
	type client struct {
		p  *zktest.Proxy
		op func() (string, error)
	}
	cs := make([]client, 0, clients)
	for range clients {
		p := newProxy(b)
		op, err := setup(connect(b, p))
		if err != nil {
			b.Fatal(err)
		}
		cs = append(cs, client{p, op})
	}
	traffic := func() zktest.Traffic {
		var t zktest.Traffic
		for _, c := range cs {
			t = t.Add(c.p.Traffic())
		}
		return t
	}
	var total float64
	var sum zktest.Traffic
	var count int64
	kinds := newKindCounts()
	for range b.N {
		var counted atomic.Int64
		var failure atomic.Pointer[error]
		start := time.Now().Add(countAfter)
		end := start.Add(window)
		var before zktest.Traffic
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
					kind, err := c.op()
					if err != nil {
						failure.Store(&err)
						return
					}
					if counting {
						counted.Add(1)
						kinds.add(kind, c.p.Traffic().RoundTrips-from)
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

// kindCounts sums round trips by kind of operation, for throughput.
type kindCounts struct {
	mu   sync.Mutex
	ops  map[string]int64
	rtts map[string]int64
}

func newKindCounts() *kindCounts {
	return &kindCounts{ops: map[string]int64{}, rtts: map[string]int64{}}
}

func (k *kindCounts) add(kind string, rtts int64) {
	if kind == "" {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.ops[kind]++
	k.rtts[kind] += rtts
}

// report reports each kind's round trips per operation of that kind.
func (k *kindCounts) report(b *testing.B) {
	for kind, n := range k.ops {
		b.ReportMetric(float64(k.rtts[kind])/float64(n), "rtts/"+kind)
	}
}

// curator runs a bench mode of the Java peer through p once per b.N and
// reports its operations per second. The peer goes through a proxy, as our
// clients do, so that both pay the same hop (and the same delay).
func curator(b *testing.B, p *zktest.Proxy, mode, path string, args ...string) {
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
	unit := "ops/s"
	if mode == "bench-mutex" {
		unit = "handoffs/s"
	}
	b.ReportMetric(total/float64(b.N), unit)
}
