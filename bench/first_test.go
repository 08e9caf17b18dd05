package bench_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/locks"
)

// What BenchmarkFirstAcquire idles for and how many sessions it times.
// ZKBENCH_FIRST_IDLE sets the idle time (a Go duration).
const (
	firstSessions = 20
	firstIdle     = 60 * time.Second
	firstIdleEnv  = "ZKBENCH_FIRST_IDLE"
	firstTimeout  = 10 * time.Second                      // the session timeout, the default
	firstPhase    = firstTimeout * 4 / 10 / firstSessions // the idle cycle over the sessions
)

// BenchmarkFirstAcquire times an uncontended Mutex.Lock (not its Release),
// each session through a proxy of its own, and reports the median as
// median-ns:
//
//   - busy: one session that locks and releases again and again;
//   - after-idle: 20 sessions, each its first Lock after idling for 60 s
//     (ZKBENCH_FIRST_IDLE), one after the other. Session i idles i × 0.2 s
//     longer, so that their Locks fall at 20 points of the idle probes'
//     cycle (every 3/8 of the timeout, from each session's own start: a
//     stagger of their connects alone would shift the cycle with them).
//     Beside each, just before or just
//     after it in turn, a session that holds another lock all along (so
//     it probes as a busy one) takes a lock too: busy-median-ns is the
//     median of those, and x-busy median-ns ÷ busy-median-ns. The two are
//     timed alike, one lock on a machine that was idle before it, which
//     back-to-back locks (busy) are not. Then each idle session locks
//     again at once: again-median-ns and again-max-ns time those Locks,
//     which must not wait for a proof either (the probe the first made
//     the session send once kept them waiting, up to a fifth of the
//     timeout);
//   - after-idle-no-idle-probes: the same with WithoutIdleProbes, whose
//     first Lock waits for a new proof of life.
//
// The lock paths are persistent nodes made beforehand: the benchmarks'
// server reaps empty containers once a minute, and a directory made again
// would cost the first Lock after idleness two round trips, whatever its
// session's probes. The session timeout is 10 s. after-idle and
// after-idle-no-idle-probes measure one round, whatever b.N.
func BenchmarkFirstAcquire(b *testing.B) {
	runInTurn(b,
		sub{"busy", benchBusyAcquire},
		sub{"after-idle", func(b *testing.B) { benchAfterIdle(b) }},
		sub{"after-idle-no-idle-probes", func(b *testing.B) { benchAfterIdle(b, recipes.WithoutIdleProbes()) }},
	)
}

func benchBusyAcquire(b *testing.B) {
	admin, root := newRoot(b)
	removeAtEnd(b, admin, root)
	ensurePersistent(b, admin, root+"/busy")
	p := newProxy(b)
	m := newMutex(b, connectWith(b, recipes.WithDialer(p.Dialer), recipes.WithSessionTimeout(firstTimeout)), root+"/busy")
	lock := func() time.Duration { return timedLock(b, m) }
	lock() // as its first, untimed
	var took []time.Duration
	for b.Loop() {
		took = append(took, lock())
	}
	b.ReportMetric(float64(median(took)), "median-ns")
}

func benchAfterIdle(b *testing.B, opts ...recipes.Option) {
	idle := firstIdle
	if v := os.Getenv(firstIdleEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			b.Fatalf("%s=%q: want a duration such as 60s", firstIdleEnv, v)
		}
		idle = d
	}
	admin, root := newRoot(b)
	removeAtEnd(b, admin, root)
	ctx := context.Background()
	type idler struct {
		lock func() time.Duration
		at   time.Time // when it may lock
	}
	idlers := make([]idler, firstSessions)
	for i := range idlers {
		p := newProxy(b)
		sess := connectWith(b, append([]recipes.Option{recipes.WithDialer(p.Dialer), recipes.WithSessionTimeout(firstTimeout)}, opts...)...)
		path := fmt.Sprintf("%s/idle-%d", root, i)
		ensurePersistent(b, admin, path)
		m := newMutex(b, sess, path)
		lock := func() time.Duration { return timedLock(b, m) }
		lock() // as its first, untimed
		idlers[i] = idler{lock, time.Now().Add(idle + time.Duration(i)*firstPhase)}
	}
	// The busy session's lock, taken beside each idle one's, on a session
	// that holds another lock all along.
	p := newProxy(b)
	busySess := connectWith(b, recipes.WithDialer(p.Dialer), recipes.WithSessionTimeout(firstTimeout))
	kept, err := newMutex(b, busySess, root+"/kept").Lock(ctx)
	if err != nil {
		b.Fatalf("lock: %v", err)
	}
	defer func() { _ = kept.Release(ctx) }()
	ensurePersistent(b, admin, root+"/busy")
	busy := newMutex(b, busySess, root+"/busy")
	busyLock := func() time.Duration { return timedLock(b, busy) }
	busyLock() // as its first, untimed
	b.ResetTimer()
	took := make([]time.Duration, 0, len(idlers))
	again := make([]time.Duration, 0, len(idlers))
	beside := make([]time.Duration, 0, len(idlers))
	for i, it := range idlers {
		time.Sleep(time.Until(it.at)) // idleness is what is measured
		if i%2 == 0 {
			beside = append(beside, busyLock())
			took = append(took, it.lock())
		} else {
			took = append(took, it.lock())
			beside = append(beside, busyLock())
		}
		again = append(again, it.lock())
	}
	b.ReportMetric(float64(median(took)), "median-ns")
	b.ReportMetric(float64(slices.Max(took)), "max-ns")
	b.ReportMetric(float64(median(again)), "again-median-ns")
	b.ReportMetric(float64(slices.Max(again)), "again-max-ns")
	b.ReportMetric(float64(median(beside)), "busy-median-ns")
	b.ReportMetric(float64(median(took))/float64(median(beside)), "x-busy")
}

// timedLock takes and releases m, and returns how long its Lock took.
func timedLock(b *testing.B, m *locks.Mutex) time.Duration {
	ctx := context.Background()
	start := time.Now()
	held, err := m.Lock(ctx)
	took := time.Since(start)
	if err != nil {
		b.Fatalf("lock: %v", err)
	}
	if err := held.Release(ctx); err != nil {
		b.Fatalf("release: %v", err)
	}
	return took
}

// median returns the median of ds, which it sorts.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}
