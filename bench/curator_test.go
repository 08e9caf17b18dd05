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
		throughput(b, clients, func(sess *recipes.Session) (func() error, error) {
			rw, err := locks.NewRWMutex(sess, path)
			if err != nil {
				return nil, err
			}
			return func() error {
				lock := rw.RLock
				if rand.IntN(100) >= readPercent {
					lock = rw.Lock
				}
				held, err := lock(context.Background())
				if err != nil {
					return err
				}
				return held.Release(context.Background())
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
		throughput(b, clients, func(sess *recipes.Session) (func() error, error) {
			sem, err := locks.NewSemaphore(sess, path, leases)
			if err != nil {
				return nil, err
			}
			return func() error {
				ls, err := sem.Acquire(context.Background(), 1)
				if err != nil {
					return err
				}
				return ls[0].Release(context.Background())
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

// throughput connects clients sessions, makes each one's operation with
// setup, runs them all in a loop for countAfter and then window, and reports the
// operations per second of the window, with the requests, round trips and
// watch notifications per operation summed over all sessions.
func throughput(b *testing.B, clients int, setup func(*recipes.Session) (func() error, error)) {
	b.Helper()
	p := newProxy(b) // counts all the clients
	ops := make([]func() error, 0, clients)
	for range clients {
		op, err := setup(connect(b, p))
		if err != nil {
			b.Fatal(err)
		}
		ops = append(ops, op)
	}
	var total float64
	var traffic zktest.Traffic
	var count int64
	for range b.N {
		var counted atomic.Int64
		var failure atomic.Pointer[error]
		start := time.Now().Add(countAfter)
		end := start.Add(window)
		var before zktest.Traffic
		var once sync.Once
		var wg sync.WaitGroup
		for _, op := range ops {
			wg.Go(func() {
				for now := time.Now(); now.Before(end) && failure.Load() == nil; now = time.Now() {
					if !now.Before(start) {
						once.Do(func() { before = p.Traffic() })
					}
					if err := op(); err != nil {
						failure.Store(&err)
						return
					}
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
		traffic = traffic.Add(p.Traffic().Sub(before))
		total += float64(counted.Load()) / window.Seconds()
		count += counted.Load()
	}
	b.ReportMetric(total/float64(b.N), "ops/s")
	reportTraffic(b, int(count), traffic)
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
