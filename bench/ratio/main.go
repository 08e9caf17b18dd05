// Command ratio reads `go test -bench` output of the bench package on stdin
// and prints each benchmark's metrics, averaged over repeated -count runs,
// and the ratios the lock recipes are held to:
//
//	go test -run '^$' -bench . -count 10 ./bench/ | go run ./bench/ratio
//
// It only looks at lines starting with "Benchmark" and ignores the rest.
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
	contCurator    = "BenchmarkContendedCurator"
	rwName         = "BenchmarkReadHeavy/rwmutex"
	rwCurator      = "BenchmarkReadHeavy/curator"
	semName        = "BenchmarkSemaphore/semaphore"
	semCurator     = "BenchmarkSemaphore/curator"
	dbName         = "BenchmarkDoubleBarrier/barriers"
	dbCurator      = "BenchmarkDoubleBarrier/curator"
)

// Targets from bench/README.md.
const (
	maxUncontendedRatio = 1.05 // mutex ns/op ÷ floor ns/op, at most
	minContendedRatio   = 1.3  // mutex handoffs/s ÷ zk.Lock handoffs/s, at least
	minCuratorRatio     = 1.5  // read-heavy and semaphore ops/s ÷ Curator's, at least
	maxBarrierRatio     = 1.0  // double barrier last-in time ÷ Curator's, at most
)

var procSuffix = regexp.MustCompile(`-\d+$`)

// results holds every value seen, by benchmark and unit, in input order.
type results struct {
	names  []string
	values map[string]map[string][]float64
}

func parse(r io.Reader) (*results, error) {
	res := &results{values: map[string]map[string][]float64{}}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(fields[1]); err != nil {
			continue // not a result line (a log line that happens to start so)
		}
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
	return res, sc.Err()
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

func (r *results) printTable(w io.Writer) {
	units := []string{"ns/op", "handoffs/s", "ops/s", "reqs/op", "watches/op", "last-in-ms", "last-reqs"}
	fmt.Fprintf(w, "%-32s %5s", "benchmark (mean)", "runs")
	for _, u := range units {
		fmt.Fprintf(w, " %12s", u)
	}
	fmt.Fprintln(w)
	for _, name := range r.names {
		fmt.Fprintf(w, "%-32s %5d", name, len(r.values[name]["ns/op"]))
		for _, u := range units {
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
		fmt.Fprintf(w, "%-44s %8s\n", label, "n/a")
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
	fmt.Fprintf(w, "%-44s %8.3f%s\n", label, v, verdict)
}

func (r *results) printRatios(w io.Writer) {
	v, ok := r.ratio(mutexName, floorName, "ns/op")
	printRatio(w, "uncontended mutex/floor ns/op", v, ok,
		fmt.Sprintf("<= %.2f", maxUncontendedRatio), v <= maxUncontendedRatio)
	v, ok = r.ratio(mutexName, zkLockName, "ns/op")
	printRatio(w, "uncontended mutex/zk.Lock ns/op", v, ok, "", false)
	v, ok = r.ratio(contMutexName, contZKLockName, "handoffs/s")
	printRatio(w, "contended mutex/zk.Lock handoffs/s", v, ok,
		fmt.Sprintf(">= %.2f", minContendedRatio), v >= minContendedRatio)
	v, ok = r.ratio(contMutexName, contCurator, "handoffs/s")
	printRatio(w, "contended mutex/Curator handoffs/s", v, ok, "", false)
	for _, c := range []struct{ label, ours, theirs string }{
		{"read-heavy RWMutex/Curator ops/s", rwName, rwCurator},
		{"semaphore Semaphore/Curator ops/s", semName, semCurator},
	} {
		v, ok = r.ratio(c.ours, c.theirs, "ops/s")
		printRatio(w, c.label, v, ok, fmt.Sprintf(">= %.2f", minCuratorRatio), v >= minCuratorRatio)
	}
	v, ok = r.ratio(dbName, dbCurator, "last-in-ms")
	printRatio(w, "double barrier last-in time/Curator", v, ok,
		fmt.Sprintf("<= %.2f", maxBarrierRatio), v <= maxBarrierRatio)
	for _, name := range []string{floorName, mutexName, zkLockName, contMutexName, contZKLockName, rwName, semName} {
		v, ok := r.mean(name, "reqs/op")
		printRatio(w, strings.TrimPrefix(name, "Benchmark")+" reqs/op", v, ok, "", false)
	}
}

func main() {
	res, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ratio:", err)
		os.Exit(1)
	}
	if len(res.names) == 0 {
		fmt.Fprintln(os.Stderr, "ratio: no benchmark results on stdin")
		os.Exit(1)
	}
	res.printTable(os.Stdout)
	fmt.Println()
	res.printRatios(os.Stdout)
}
