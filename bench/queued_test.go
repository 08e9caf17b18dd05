package bench_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkrecipes/recipes/internal/testenv"
)

// queuePoll is how often waitQueued looks at the waiters.
const queuePoll = time.Millisecond

// waitQueued returns the time at which the n waiters were first seen
// queued, which is when every one has called Lock and, from then on, nothing
// moves until the holder lets go:
//
//   - entered counts n;
//   - no request of a session through p waits for its reply, and no
//     notification is on its way to one (p.Pending): no waiter is about to
//     be woken by the server;
//   - p's Traffic is the same a poll later, and then a goroutine dump shows
//     n goroutines in queueWaiter, every one parked on a channel, a lock or
//     the network, none runnable, running or sleeping: no waiter is about
//     to send anything;
//   - the first two still hold after the dump.
//
// The state is reported as of the first look, so the queue time it gives is
// late by at most a poll. It holds only for recipes that, once queued, wait
// on a watch and on nothing else, such as a timer (an engine that re-checks
// on a timer would be taken as not queued until its last check). One gap is
// left: a request a client has written but the proxy has not yet read for a
// whole poll would go unseen.
//
// It gives up with the waiters' first error, or with a tooMuchMemoryError
// once the process maps more than maxMapped bytes.
func waitQueued(p *testenv.Proxy, n int, entered *atomic.Int64, failure *firstError, maxMapped uint64) (time.Time, error) {
	tick := time.NewTicker(queuePoll)
	defer tick.Stop()
	quiet := func() (testenv.Traffic, bool) {
		t := p.Traffic()
		r, w := p.Pending()
		return t, entered.Load() == int64(n) && r == 0 && w == 0
	}
	var since time.Time // the first look of the current quiet stretch; zero if none
	var traffic testenv.Traffic
	for ; ; <-tick.C {
		if err := failure.get(); err != nil {
			return time.Time{}, err
		}
		if mapped := mappedMemory(); mapped > maxMapped {
			return time.Time{}, &tooMuchMemoryError{entered: entered.Load(), n: n, mapped: mapped}
		}
		now := time.Now()
		t, ok := quiet()
		switch {
		case !ok:
			since = time.Time{}
		case since.IsZero() || t != traffic:
			since, traffic = now, t
		default:
			if parkedWaiters(n) {
				if t, ok := quiet(); ok && t == traffic {
					return since, nil
				}
			}
			since = time.Time{}
		}
	}
}

// parkedWaiters reports whether the process has n goroutines running
// queueWaiter and each is parked waiting for another goroutine or for the
// network.
func parkedWaiters(n int) bool {
	buf := make([]byte, 1<<20)
	for {
		m := runtime.Stack(buf, true)
		if m < len(buf) {
			buf = buf[:m]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	marker := []byte("bench_test.queueWaiter(")
	waiters := 0
	for g := range bytes.SplitSeq(buf, []byte("\n\n")) {
		if !bytes.Contains(g, marker) {
			continue
		}
		waiters++
		if !parked(g) {
			return false
		}
	}
	return waiters == n
}

// parkedStates are the states, as a goroutine dump's header shows them
// ("goroutine 7 [select, 2 minutes]:"), of a goroutine waiting for another
// or for the network. Runnable, running, in a system call or asleep are
// not among them.
var parkedStates = [][]byte{
	[]byte("select"), []byte("chan receive"), []byte("chan send"),
	[]byte("sync."), []byte("semacquire"), []byte("IO wait"),
}

// parked reports whether the goroutine whose dump is g is in one of
// parkedStates.
func parked(g []byte) bool {
	header, _, _ := bytes.Cut(g, []byte("\n"))
	_, state, ok := bytes.Cut(header, []byte("["))
	if !ok {
		return false
	}
	for _, s := range parkedStates {
		if bytes.HasPrefix(state, s) {
			return true
		}
	}
	return false
}

// mappedMemory returns the bytes of memory the Go runtime has mapped, as it
// reports in runtime/metrics, without stopping the world.
func mappedMemory() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// tooMuchMemoryError reports a round given up because the process grew
// past ZKBENCH_MAX_MIB while its waiters queued.
type tooMuchMemoryError struct {
	entered int64  // waiters that had called Lock
	n       int    // waiters in the round
	mapped  uint64 // bytes mapped
}

func (e *tooMuchMemoryError) Error() string {
	return fmt.Sprintf("the process mapped %d MiB, more than %s allows, with %d of %d waiters started and not all queued",
		e.mapped>>20, maxMiBEnv, e.entered, e.n)
}

// Environment variables that bound BenchmarkQueue.
const (
	maxWaitersEnv = "ZKBENCH_MAX_WAITERS" // skip the sizes above this many waiters
	maxMiBEnv     = "ZKBENCH_MAX_MIB"     // give a round up past this many MiB mapped
	defaultMaxMiB = 2048
)

// queueLimits are BenchmarkQueue's bounds, from the environment.
type queueLimits struct {
	maxWaiters int    // sizes above are skipped; 0 for no bound
	maxMapped  uint64 // bytes the process may map while waiters queue
}

func queueLimitsFromEnv() (queueLimits, error) {
	l := queueLimits{maxMapped: defaultMaxMiB << 20}
	if v := os.Getenv(maxWaitersEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return l, fmt.Errorf("%s=%q: want a number of waiters", maxWaitersEnv, v)
		}
		l.maxWaiters = n
	}
	if v := os.Getenv(maxMiBEnv); v != "" {
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil || n == 0 {
			return l, fmt.Errorf("%s=%q: want a number of MiB", maxMiBEnv, v)
		}
		l.maxMapped = n << 20
	}
	return l, nil
}

// overMemory holds the names of the benchmarks that went over the memory
// bound in this process. Benchmarks run one at a time.
var overMemory = map[string]bool{}

// check skips b if its n waiters are more than the bound, or if an earlier
// run of b (-count) went over the memory bound.
func (l queueLimits) check(b *testing.B, n int) {
	b.Helper()
	if l.maxWaiters > 0 && n > l.maxWaiters {
		b.Skipf("%d waiters: more than %s=%d", n, maxWaitersEnv, l.maxWaiters)
	}
	if overMemory[b.Name()] {
		b.Skipf("an earlier run went over %s", maxMiBEnv)
	}
}

// failed fails b with err, remembering whether it went over the memory
// bound.
func (l queueLimits) failed(b *testing.B, err error) {
	b.Helper()
	var tooMuch *tooMuchMemoryError
	if errors.As(err, &tooMuch) {
		overMemory[b.Name()] = true
		b.Fatalf("round given up: %v (raise %s to let it finish)", tooMuch, maxMiBEnv)
	}
	b.Fatal(err)
}
