// Command ratio reads `go test -bench` output of the bench package on stdin
// and prints each benchmark's metrics, averaged over repeated -count runs,
// and the ratios the lock recipes are held to:
//
//	go test -run '^$' -bench . -count 10 ./bench/ | go run ./bench/ratio
//
// It only looks at lines starting with "Benchmark" and at the "delay:"
// configuration line the benchmarks print, and ignores the rest. Results
// under different delays (ZKBENCH_DELAY) are kept apart: each delay gets its
// own table and ratios, in the order they first appear.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Names of the benchmarks compared, without the -GOMAXPROCS suffix.
const (
	floorName      = "BenchmarkUncontended/floor"
	pipelinedName  = "BenchmarkUncontended/pipelined"
	mutexName      = "BenchmarkUncontended/mutex"
	zkLockName     = "BenchmarkUncontended/zk.Lock"
	uncCurator     = "BenchmarkUncontended/curator"
	contMutexName  = "BenchmarkContended/mutex"
	contZKLockName = "BenchmarkContended/zk.Lock"
	contFloorName  = "BenchmarkContended/floor"
	contMarkedName = "BenchmarkContended/marked"
	contOwnedName  = "BenchmarkContended/owned"
	contCurator    = "BenchmarkContendedCurator"
	rwName         = "BenchmarkReadHeavy/rwmutex"
	rwCurator      = "BenchmarkReadHeavy/curator"
	semName        = "BenchmarkSemaphore/semaphore"
	semCurator     = "BenchmarkSemaphore/curator"
	dbName         = "BenchmarkDoubleBarrier/barriers"
	dbCurator      = "BenchmarkDoubleBarrier/curator"
	queuePrefix    = "BenchmarkQueue/waiters="
	queueSmall     = queuePrefix + "100"
	queueLarge     = queuePrefix + "10000"
	queueSessions  = "BenchmarkQueue/sessions=200"
	failoverName   = "BenchmarkFailover"
	handoffLatch   = "BenchmarkHandoff/latch"
	handoffCurLat  = "BenchmarkHandoff/curator-latch"
	handoffSel     = "BenchmarkHandoff/selector"
	handoffCurSel  = "BenchmarkHandoff/curator-selector"
)

// failoverSides are the prefixes of BenchmarkFailover's units, ours first.
var failoverSides = []string{"latch", "curator"}

// queueSizes are the waiters=N benchmarks held to the memory target.
var queueSizes = []string{queueSmall, queuePrefix + "1000", queueLarge}

// Targets from bench/README.md. Where a target differs between loopback and
// a delay (ZKBENCH_DELAY), the delay's is given apart.
const (
	maxUncontendedRTTs    = 2.05 // uncontended mutex round trips per lock and release, at most
	minUncontendedZKLock  = 1.0  // zk.Lock ns/op ÷ mutex ns/op on loopback, at least
	minUncontendedDelayed = 1.35 // zk.Lock's and Curator's ns/op ÷ mutex's with a delay, at least
	minContendedOwned     = 0.95 // mutex handoffs/s ÷ owned's on loopback, at least
	minContendedDelayed   = 1.3  // mutex handoffs/s ÷ zk.Lock's with a delay, at least
	minContCuratorRatio   = 2.0  // mutex handoffs/s ÷ Curator's, at least
	minCuratorRatio       = 1.5  // read-heavy ops/s ÷ Curator's, and the semaphore's on loopback, at least
	minSemaphoreDelayed   = 2.0  // semaphore ops/s ÷ Curator's with a delay, at least
	maxReadRTTs           = 2.1  // read-heavy round trips per read, at most
	maxSemaphoreRTTs      = 4    // semaphore round trips per lease, at most
	maxBarrierRatio       = 0.7  // double barrier last-in time ÷ Curator's, at most
	maxBarrierRTTs        = 2    // round trips of the double barrier's last member to get in, at most
	maxWaiterBytes        = 8192 // B/waiter at each size, at most
	minDrainRatio         = 0.8  // drain at 10,000 waiters ÷ at 100; 200 sessions ÷ 8 contenders, at least
	freeReadRTTs          = 2    // a read that finds no writer ahead: create and listing, then delete
	queuedReadRTTs        = 3    // one that does: and, after the listing, the watch of the writer
)

// units are the table's columns, in order; a section shows those it has.
var units = []string{"ns/op", "handoffs/s", "ops/s", "reqs/op", "rtts/op", "rtts/read", "queued/read",
	"rtts/write", "rtts/lease", "watches/op", "last-in-ms", "last-reqs", "last-rtts", "B/waiter", "queue-ms",
	"p50-ms", "p90-ms", "server-us/op", "server-%cpu"}

// rttUnits are the units that count round trips per operation.
var rttUnits = []string{"rtts/op", "rtts/read", "rtts/write", "rtts/lease", "last-rtts"}

var procSuffix = regexp.MustCompile(`-\d+$`)

// results holds every value seen under one delay, by benchmark and unit, in
// input order.
type results struct {
	delay  string
	names  []string
	values map[string]map[string][]float64
}

// parse returns the results by delay, in the order the delays first appear.
// Lines before any "delay:" line count as loopback.
func parse(r io.Reader) ([]*results, error) {
	var all []*results
	byDelay := map[string]*results{}
	section := func(delay string) *results {
		res := byDelay[delay]
		if res == nil {
			res = &results{delay: delay, values: map[string]map[string][]float64{}}
			byDelay[delay] = res
			all = append(all, res)
		}
		return res
	}
	delay := "0s"
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "delay:"); ok {
			delay = strings.TrimSpace(v)
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(fields[1]); err != nil {
			continue // not a result line (a log line that happens to start so)
		}
		res := section(delay)
		name := procSuffix.ReplaceAllString(fields[0], "")
		units := res.values[name]
		if units == nil {
			units = map[string][]float64{}
			res.values[name] = units
			res.names = append(res.names, name)
		}
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				break
			}
			units[fields[i+1]] = append(units[fields[i+1]], v)
		}
	}
	return all, sc.Err()
}

// mean returns the average of name's values in unit, and whether there were
// any.
func (r *results) mean(name, unit string) (float64, bool) {
	vs := r.values[name][unit]
	if len(vs) == 0 {
		return 0, false
	}
	var sum float64
	for _, v := range vs {
		sum += v
	}
	return sum / float64(len(vs)), true
}

// ratio returns mean(a)/mean(b) in unit, if both are known and b is not 0.
func (r *results) ratio(a, b, unit string) (float64, bool) {
	x, okA := r.mean(a, unit)
	y, okB := r.mean(b, unit)
	if !okA || !okB || y == 0 {
		return 0, false
	}
	return x / y, true
}

// has reports whether any of names has a result.
func (r *results) has(names ...string) bool {
	for _, n := range names {
		if _, ok := r.values[n]; ok {
			return true
		}
	}
	return false
}

func (r *results) printTable(w io.Writer) {
	var cols []string
	for _, u := range units {
		for _, name := range r.names {
			if _, ok := r.values[name][u]; ok {
				cols = append(cols, u)
				break
			}
		}
	}
	fmt.Fprintf(w, "%-32s %5s", "benchmark (mean)", "runs")
	for _, u := range cols {
		fmt.Fprintf(w, " %12s", u)
	}
	fmt.Fprintln(w)
	for _, name := range r.names {
		fmt.Fprintf(w, "%-32s %5d", name, len(r.values[name]["ns/op"]))
		for _, u := range cols {
			if v, ok := r.mean(name, u); ok {
				fmt.Fprintf(w, " %12s", format(v))
			} else {
				fmt.Fprintf(w, " %12s", "-")
			}
		}
		fmt.Fprintln(w)
	}
}

func format(v float64) string {
	switch {
	case v >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// printRatio prints one ratio and, when a check is given, whether it meets
// its target.
func printRatio(w io.Writer, label string, v float64, ok bool, check string, pass bool) {
	if !ok {
		fmt.Fprintf(w, "%-60s %9s\n", label, "n/a")
		return
	}
	verdict := ""
	if check != "" {
		verdict = "MISS"
		if pass {
			verdict = "ok"
		}
		verdict = fmt.Sprintf("  (target %s: %s)", check, verdict)
	}
	fmt.Fprintf(w, "%-60s %9s%s\n", label, format(v), verdict)
}

// delayed reports whether r was measured with a delay (ZKBENCH_DELAY).
func (r *results) delayed() bool { return r.delay != "0s" }

// check prints a ratio of a and b in unit against a target: at least min
// (atLeast) or at most it.
func (r *results) check(w io.Writer, label, a, b, unit string, atLeast bool, target float64) {
	if !r.has(a, b) {
		return
	}
	v, ok := r.ratio(a, b, unit)
	r.verdict(w, label, v, ok, atLeast, target)
}

// checkMean prints the mean of name in unit against a target.
func (r *results) checkMean(w io.Writer, label, name, unit string, atLeast bool, target float64) {
	if !r.has(name) {
		return
	}
	v, ok := r.mean(name, unit)
	r.verdict(w, label, v, ok, atLeast, target)
}

func (r *results) verdict(w io.Writer, label string, v float64, ok, atLeast bool, target float64) {
	if atLeast {
		printRatio(w, label, v, ok, fmt.Sprintf(">= %.2f", target), v >= target)
	} else {
		printRatio(w, label, v, ok, fmt.Sprintf("<= %.2f", target), v <= target)
	}
}

// note prints a ratio of a and b in unit with no target.
func (r *results) note(w io.Writer, label, a, b, unit string) {
	if r.has(a, b) {
		v, ok := r.ratio(a, b, unit)
		printRatio(w, label, v, ok, "", false)
	}
}

// printRatios prints the ratios of which r has at least one benchmark (so
// that a run of a few benchmarks is not buried in n/a), n/a where the other
// is missing, each against its target in r's mode where it has one.
func (r *results) printRatios(w io.Writer) {
	const atLeast, atMost = true, false
	delayed := r.delayed()

	// Uncontended: round trips, and time against zk.Lock and Curator
	// (theirs ÷ ours: above 1, ours is faster).
	r.checkMean(w, "uncontended mutex round trips", mutexName, "rtts/op", atMost, maxUncontendedRTTs)
	if delayed {
		r.check(w, "uncontended zk.Lock/mutex ns/op", zkLockName, mutexName, "ns/op", atLeast, minUncontendedDelayed)
		r.check(w, "uncontended Curator/mutex ns/op", uncCurator, mutexName, "ns/op", atLeast, minUncontendedDelayed)
	} else {
		r.check(w, "uncontended zk.Lock/mutex ns/op", zkLockName, mutexName, "ns/op", atLeast, minUncontendedZKLock)
		r.note(w, "uncontended Curator/mutex ns/op", uncCurator, mutexName, "ns/op")
	}
	r.note(w, "uncontended floor/mutex ns/op (3 round trips one after another)", floorName, mutexName, "ns/op")
	// Not a target: what the least a lock of these nodes can do (the same
	// requests in two round trips, nothing checked) makes against zk.Lock
	// and Curator, so whether the targets are within reach on this machine.
	r.note(w, "uncontended zk.Lock/pipelined ns/op (the most any lock can make)", zkLockName, pipelinedName, "ns/op")
	r.note(w, "uncontended Curator/pipelined ns/op", uncCurator, pipelinedName, "ns/op")

	// Contended.
	if delayed {
		r.check(w, "contended mutex/zk.Lock handoffs/s", contMutexName, contZKLockName, "handoffs/s", atLeast, minContendedDelayed)
		r.note(w, "contended mutex/owned handoffs/s", contMutexName, contOwnedName, "handoffs/s")
	} else {
		r.note(w, "contended mutex/zk.Lock handoffs/s", contMutexName, contZKLockName, "handoffs/s")
		r.check(w, "contended mutex/owned handoffs/s", contMutexName, contOwnedName, "handoffs/s", atLeast, minContendedOwned)
	}
	r.check(w, "contended mutex/Curator handoffs/s", contMutexName, contCurator, "handoffs/s", atLeast, minContCuratorRatio)
	// Not targets of ours: what a perfect hand-off, the least safe one, and
	// the least safe one that keeps the Mutex's loss promise would make
	// against the same baselines (no lock of these nodes does better than
	// the first).
	for _, bound := range []struct{ label, name string }{
		{"perfect hand-off", contFloorName},
		{"safe hand-off", contMarkedName},
		{"safe hand-off with loss watch", contOwnedName},
	} {
		r.note(w, fmt.Sprintf("contended %s/zk.Lock handoffs/s", bound.label), bound.name, contZKLockName, "handoffs/s")
		r.note(w, fmt.Sprintf("contended %s/Curator handoffs/s", bound.label), bound.name, contCurator, "handoffs/s")
	}

	// Read-heavy: round trips per read, against the least a read can
	// cost in this run (a read that finds a writer ahead of it must watch
	// that writer, which it can name only from its listing: a round trip
	// more), and throughput against Curator's.
	r.checkMean(w, "read-heavy RWMutex round trips per read", rwName, "rtts/read", atMost, maxReadRTTs)
	if q, ok := r.mean(rwName, "queued/read"); ok {
		printRatio(w, fmt.Sprintf("  the least for these reads: %d + %d × %.3f queued", freeReadRTTs, queuedReadRTTs-freeReadRTTs, q),
			freeReadRTTs+(queuedReadRTTs-freeReadRTTs)*q, true, "", false)
	}
	r.check(w, "read-heavy RWMutex/Curator ops/s", rwName, rwCurator, "ops/s", atLeast, minCuratorRatio)

	// Semaphore.
	r.checkMean(w, "semaphore round trips per lease", semName, "rtts/lease", atMost, maxSemaphoreRTTs)
	if delayed {
		r.check(w, "semaphore Semaphore/Curator ops/s", semName, semCurator, "ops/s", atLeast, minSemaphoreDelayed)
	} else {
		r.check(w, "semaphore Semaphore/Curator ops/s", semName, semCurator, "ops/s", atLeast, minCuratorRatio)
	}

	// Double barrier.
	r.checkMean(w, "double barrier last member's round trips", dbName, "last-rtts", atMost, maxBarrierRTTs)
	r.check(w, "double barrier last-in time/Curator", dbName, dbCurator, "last-in-ms", atMost, maxBarrierRatio)

	// Queue.
	if r.has(queueSizes...) {
		for _, name := range queueSizes {
			r.checkMean(w, strings.TrimPrefix(name, "Benchmark")+" B/waiter", name, "B/waiter", atMost, maxWaiterBytes)
		}
		r.check(w, "drain 10,000 waiters/100 waiters handoffs/s", queueLarge, queueSmall, "handoffs/s", atLeast, minDrainRatio)
	}
	if r.has(queueSessions) {
		r.check(w, "drain 200 sessions/8 contenders handoffs/s", queueSessions, contMutexName, "handoffs/s", atLeast, minDrainRatio)
	}

	// Elections: no targets. Ours ÷ Curator's, of times: below 1, ours is
	// quicker.
	r.printFailover(w)
	r.printCapacity(w)
	r.note(w, "hand-off latch/Curator ns/op (ours ÷ theirs)", handoffLatch, handoffCurLat, "ns/op")
	r.note(w, "hand-off latch/Curator p50 (ours ÷ theirs)", handoffLatch, handoffCurLat, "p50-ms")
	r.note(w, "hand-off selector/Curator ns/op (ours ÷ theirs)", handoffSel, handoffCurSel, "ns/op")
	r.note(w, "hand-off selector/Curator p50 (ours ÷ theirs)", handoffSel, handoffCurSel, "p50-ms")

	// Round trips per operation of every benchmark that counts them.
	fmt.Fprintln(w)
	for _, name := range r.names {
		for _, unit := range rttUnits {
			if v, ok := r.mean(name, unit); ok {
				printRatio(w, strings.TrimPrefix(name, "Benchmark")+" "+unit, v, ok, "", false)
			}
		}
	}
}

func main() {
	all, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ratio:", err)
		os.Exit(1)
	}
	if len(all) == 0 {
		fmt.Fprintln(os.Stderr, "ratio: no benchmark results on stdin")
		os.Exit(1)
	}
	for i, res := range all {
		if i > 0 {
			fmt.Println()
		}
		switch {
		case res.delay != "0s":
			fmt.Printf("== delay %s each way ==\n", res.delay)
		case len(all) > 1:
			fmt.Println("== loopback ==")
		}
		res.printTable(os.Stdout)
		fmt.Println()
		res.printRatios(os.Stdout)
	}
}
