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
	mutexName      = "BenchmarkUncontended/mutex"
	zkLockName     = "BenchmarkUncontended/zk.Lock"
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
)

// queueSizes are the waiters=N benchmarks held to the memory target.
var queueSizes = []string{queueSmall, queuePrefix + "1000", queueLarge}

// Targets from bench/README.md.
const (
	maxUncontendedRatio = 1.05 // mutex ns/op ÷ floor ns/op, at most
	minContendedRatio   = 1.3  // mutex handoffs/s ÷ zk.Lock handoffs/s, at least
	minContCuratorRatio = 2.0  // mutex handoffs/s ÷ Curator handoffs/s, at least
	minCuratorRatio     = 1.5  // read-heavy and semaphore ops/s ÷ Curator's, at least
	maxBarrierRatio     = 1.0  // double barrier last-in time ÷ Curator's, at most
	maxBarrierRTTs      = 3    // round trips of the double barrier's last member to get in, at most
	maxSemaphoreReqs    = 7    // requests per lease of the semaphore benchmark, at most
	maxWaiterBytes      = 8192 // B/waiter at each size, at most
	minDrainRatio       = 0.8  // drain at 10,000 waiters ÷ at 100; 200 sessions ÷ 8 contenders, at least
)

// units are the table's columns, in order; a section shows those it has.
var units = []string{"ns/op", "handoffs/s", "ops/s", "reqs/op", "rtts/op", "watches/op",
	"last-in-ms", "last-reqs", "last-rtts", "B/waiter", "queue-ms"}

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
		fmt.Fprintf(w, "%-48s %9s\n", label, "n/a")
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

// printRatios prints the ratios of which r has at least one benchmark (so
// that a run of a few benchmarks is not buried in n/a), n/a where the other
// is missing.
func (r *results) printRatios(w io.Writer) {
	if r.has(mutexName, floorName) {
		v, ok := r.ratio(mutexName, floorName, "ns/op")
		printRatio(w, "uncontended mutex/floor ns/op", v, ok,
			fmt.Sprintf("<= %.2f", maxUncontendedRatio), v <= maxUncontendedRatio)
	}
	if r.has(mutexName, zkLockName) {
		v, ok := r.ratio(mutexName, zkLockName, "ns/op")
		printRatio(w, "uncontended mutex/zk.Lock ns/op", v, ok, "", false)
	}
	if r.has(contMutexName, contZKLockName) {
		v, ok := r.ratio(contMutexName, contZKLockName, "handoffs/s")
		printRatio(w, "contended mutex/zk.Lock handoffs/s", v, ok,
			fmt.Sprintf(">= %.2f", minContendedRatio), v >= minContendedRatio)
	}
	if r.has(contMutexName, contCurator) {
		v, ok := r.ratio(contMutexName, contCurator, "handoffs/s")
		printRatio(w, "contended mutex/Curator handoffs/s", v, ok,
			fmt.Sprintf(">= %.2f", minContCuratorRatio), v >= minContCuratorRatio)
	}
	// Not targets of ours: whether the contended targets are within reach
	// in this mode on this machine, by a perfect hand-off (no lock of these
	// nodes can do better), by the least safe one, and by the least safe one
	// that keeps the Mutex's loss promise.
	for _, bound := range []struct{ label, name string }{
		{"perfect hand-off", contFloorName},
		{"safe hand-off", contMarkedName},
		{"safe hand-off with loss watch", contOwnedName},
	} {
		for _, base := range []struct {
			label, name string
			min         float64
		}{{"zk.Lock", contZKLockName, minContendedRatio}, {"Curator", contCurator, minContCuratorRatio}} {
			if r.has(bound.name, base.name) {
				v, ok := r.ratio(bound.name, base.name, "handoffs/s")
				printRatio(w, fmt.Sprintf("contended %s/%s handoffs/s", bound.label, base.label), v, ok,
					fmt.Sprintf(">= %.2f as for the mutex", base.min), v >= base.min)
			}
		}
	}
	for _, c := range []struct{ label, ours, theirs string }{
		{"read-heavy RWMutex/Curator ops/s", rwName, rwCurator},
		{"semaphore Semaphore/Curator ops/s", semName, semCurator},
	} {
		if r.has(c.ours, c.theirs) {
			v, ok := r.ratio(c.ours, c.theirs, "ops/s")
			printRatio(w, c.label, v, ok, fmt.Sprintf(">= %.2f", minCuratorRatio), v >= minCuratorRatio)
		}
	}
	if r.has(dbName, dbCurator) {
		v, ok := r.ratio(dbName, dbCurator, "last-in-ms")
		printRatio(w, "double barrier last-in time/Curator", v, ok,
			fmt.Sprintf("<= %.2f", maxBarrierRatio), v <= maxBarrierRatio)
	}
	if r.has(semName) {
		v, ok := r.mean(semName, "reqs/op")
		printRatio(w, "semaphore requests per lease", v, ok,
			fmt.Sprintf("<= %d", maxSemaphoreReqs), v <= maxSemaphoreReqs)
	}
	if r.has(dbName) {
		v, ok := r.mean(dbName, "last-rtts")
		printRatio(w, "double barrier last member's round trips", v, ok,
			fmt.Sprintf("<= %d", maxBarrierRTTs), v <= maxBarrierRTTs)
	}
	if r.has(queueSizes...) {
		for _, name := range queueSizes {
			v, ok := r.mean(name, "B/waiter")
			printRatio(w, strings.TrimPrefix(name, "Benchmark")+" B/waiter", v, ok,
				fmt.Sprintf("<= %d", maxWaiterBytes), v <= maxWaiterBytes)
		}
		v, ok := r.ratio(queueLarge, queueSmall, "handoffs/s")
		printRatio(w, "drain 10,000 waiters/100 waiters handoffs/s", v, ok,
			fmt.Sprintf(">= %.2f", minDrainRatio), v >= minDrainRatio)
	}
	if r.has(queueSessions) {
		v, ok := r.ratio(queueSessions, contMutexName, "handoffs/s")
		printRatio(w, "drain 200 sessions/8 contenders handoffs/s", v, ok,
			fmt.Sprintf(">= %.2f", minDrainRatio), v >= minDrainRatio)
	}
	for _, unit := range []string{"reqs/op", "rtts/op"} {
		for _, name := range []string{floorName, mutexName, zkLockName, contMutexName, contZKLockName, contCurator, rwName, semName} {
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
