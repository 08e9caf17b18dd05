package bench_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/locks"
)

// queueSessions is how many waiters, each with a session of its own, queue
// on one Mutex in BenchmarkQueue/sessions=200.
const queueSessions = 200

// BenchmarkQueue queues many waiters behind a holder of one lock, then lets
// go and has each take the lock and release it at once, one after the
// other:
//
//   - waiters=N: N goroutines wait on one locks.Mutex through one session
//     (the holder's) in this process, for N = 100, 1,000 and 10,000. It
//     reports the memory each waiter costs while queued (B/waiter).
//   - sessions=200: 200 waiters, each with a session of its own, wait on
//     one Mutex (the holder has a 201st).
//
// An op is one round: queue them all, then drain the queue. Each reports
// the time from the first waiter's start until all are queued (queue-ms),
// and the hand-offs per second while the queue drains (handoffs/s), with the
// requests, round trips and watch notifications of the drain per hand-off.
// See waitQueued for what "queued" means and how it is observed.
//
// ZKBENCH_MAX_WAITERS=n skips the sizes above n. A round is abandoned, and
// the benchmark fails, if the process maps more than ZKBENCH_MAX_MIB MiB
// (default 2048, about 25 times what 10,000 waiters may use at the target
// of 8 KiB each); later runs of that size in the same process (-count)
// skip.
func BenchmarkQueue(b *testing.B) {
	limits, err := queueLimitsFromEnv()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("waiters=%d", n), func(b *testing.B) {
			limits.check(b, n)
			_, root := newRoot(b)
			p := newProxy(b)
			m := newMutex(b, connect(b, p), root+"/mutex")
			lockers := make([]func(context.Context) (*locks.Hold, error), n)
			for i := range lockers {
				lockers[i] = m.Lock
			}
			runQueue(b, p, limits, m, lockers, true)
		})
	}
	b.Run(fmt.Sprintf("sessions=%d", queueSessions), func(b *testing.B) {
		limits.check(b, queueSessions)
		_, root := newRoot(b)
		path := root + "/mutex"
		p := newProxy(b)
		holder := newMutex(b, connect(b, p), path)
		lockers := make([]func(context.Context) (*locks.Hold, error), queueSessions)
		for i := range lockers {
			lockers[i] = newMutex(b, connect(b, p), path).Lock
		}
		runQueue(b, p, limits, holder, lockers, false)
	})
}

// runQueue runs rounds of queueRound with holder's lock and one waiter per
// locker until b.Loop is done, and reports their means; B/waiter only if
// perWaiterMemory.
func runQueue(b *testing.B, p *testenv.Proxy, limits queueLimits, holder *locks.Mutex,
	lockers []func(context.Context) (*locks.Hold, error), perWaiterMemory bool) {
	b.Helper()
	// Once untimed, so that making the lock's directory is not measured.
	h, err := holder.Lock(context.Background())
	if err != nil {
		b.Fatalf("warm-up lock: %v", err)
	}
	if err := h.Release(context.Background()); err != nil {
		b.Fatalf("warm-up release: %v", err)
	}
	var sum queueResult
	rounds := 0
	for b.Loop() {
		r, err := queueRound(p, limits.maxMapped, holder, lockers)
		if err != nil {
			limits.failed(b, err)
		}
		sum.add(r)
		rounds++
	}
	n := float64(len(lockers))
	if perWaiterMemory {
		b.ReportMetric(float64(sum.memory)/float64(rounds)/n, "B/waiter")
	}
	b.ReportMetric(float64(sum.queue.Microseconds())/1000/float64(rounds), "queue-ms")
	b.ReportMetric(n*float64(rounds)/sum.drain.Seconds(), "handoffs/s")
	reportTraffic(b, len(lockers)*rounds, sum.traffic)
}

// queueResult is what one round measured.
type queueResult struct {
	memory  int64           // heap and stacks in use while queued, less before
	queue   time.Duration   // from the first waiter's start until all queued
	drain   time.Duration   // from the holder's release until all released
	traffic testenv.Traffic // on the wire during the drain
}

func (r *queueResult) add(o queueResult) {
	r.memory += o.memory
	r.queue += o.queue
	r.drain += o.drain
	r.traffic = r.traffic.Add(o.traffic)
}

// queueRound takes holder's lock, starts one waiter goroutine per locker
// and waits until they are all queued (see waitQueued), measuring the heap
// and stacks in use, after a collection, before they start and once they
// are queued. Then it releases the hold and times the waiters as each takes
// the lock and releases it at once, until the last has released. Every
// session the lockers use must go through p, and nothing else through p
// may send requests meanwhile. If the process maps more than maxMapped
// bytes before the waiters are queued, it cancels them and fails.
func queueRound(p *testenv.Proxy, maxMapped uint64, holder *locks.Mutex,
	lockers []func(context.Context) (*locks.Hold, error)) (queueResult, error) {
	var r queueResult
	held, err := holder.Lock(context.Background())
	if err != nil {
		return r, fmt.Errorf("holder: lock: %w", err)
	}
	release := sync.OnceValue(func() error { return held.Release(context.Background()) })
	before := memoryInUse()
	ctx, cancel := context.WithCancel(context.Background())
	var failure firstError
	var entered atomic.Int64
	var wg sync.WaitGroup
	defer func() {
		cancel() // a waiter still queued after a failure gives up
		wg.Wait()
		_ = release()
	}()
	start := time.Now()
	for _, lock := range lockers {
		wg.Go(func() { queueWaiter(ctx, lock, &entered, &failure) })
	}
	queued, err := waitQueued(p, len(lockers), &entered, &failure, maxMapped)
	if err != nil {
		return r, err
	}
	r.queue = queued.Sub(start)
	r.memory = int64(memoryInUse()) - int64(before)

	traffic := p.Traffic()
	start = time.Now()
	if err := release(); err != nil {
		return r, fmt.Errorf("holder: release: %w", err)
	}
	wg.Wait()
	r.drain = time.Since(start)
	r.traffic = p.Traffic().Sub(traffic)
	return r, failure.get()
}

// queueWaiter takes the lock with lock, counting itself in entered just
// before, and releases it at once. It is a function of its own so that
// waitQueued can tell the waiters' goroutines by name.
func queueWaiter(ctx context.Context, lock func(context.Context) (*locks.Hold, error), entered *atomic.Int64, failure *firstError) {
	entered.Add(1)
	held, err := lock(ctx)
	if err != nil {
		failure.set(fmt.Errorf("waiter: lock: %w", err))
		return
	}
	if err := held.Release(context.Background()); err != nil {
		failure.set(fmt.Errorf("waiter: release: %w", err))
	}
}

// memoryInUse collects garbage and returns the bytes of heap spans and
// goroutine stacks in use.
func memoryInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse + ms.StackInuse
}

// firstError keeps the first error set.
type firstError struct {
	mu  sync.Mutex
	err error // the first error set; nil until then
}

func (f *firstError) set(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
}

func (f *firstError) get() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}
