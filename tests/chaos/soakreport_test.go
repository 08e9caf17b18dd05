package chaos_test

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes/tests/chaos"
)

// epochResult is what one epoch found.
type epochResult struct {
	n        int // the ensemble's size
	rep      *chaos.Report
	lin      []chaos.Linearity
	events   []chaos.Event
	faults   map[string]int // process faults by kind
	rounds   map[string]int // rolling rounds by kind
	findings []string
	excused  int // late takeovers with other faults about
	orphans  int
}

func (e *epochResult) sections() int { return sectionsIn(e.rep) }

func sectionsIn(rep *chaos.Report) int {
	n := 0
	for _, c := range rep.Sections {
		n += c
	}
	return n
}

// totals is what the soak's epochs found, added up.
type totals struct {
	sections   map[string]int // by recipe
	faults     map[string]int // by kind, rolling rounds as "restart-<n> <kind>"
	rounds     map[string]int
	violations map[string]int // by rule
	findings   []string
	storeOps   int
	recovered  int // store operations known only from the store
	keys       int // store keys judged by porcupine, summed over epochs
	verdicts   map[porcupine.CheckResult]int
	groups     map[string]*keyGroup // porcupine's verdicts by kind of key (keyGroupOf)
	stale      int                  // accepted writes by a superseded holder after its successor used the store
	takeovers  int
	excused    int
	worstTake  time.Duration
	orphans    int
	rebuilt    map[int]int // by ensemble size: ensembles replaced after they went inconsistent
	epochs     int
	plot       chaos.Plot
}

func newTotals() totals {
	return totals{sections: map[string]int{}, faults: map[string]int{}, rounds: map[string]int{},
		violations: map[string]int{}, verdicts: map[porcupine.CheckResult]int{}, groups: map[string]*keyGroup{}, rebuilt: map[int]int{},
		plot: chaos.Plot{Sections: map[string][]int{}}}
}

func (t *totals) sectionsAll() int {
	n := 0
	for _, c := range t.sections {
		n += c
	}
	return n
}

func (t *totals) violationsAll() int {
	n := 0
	for _, c := range t.violations {
		n += c
	}
	return n
}

// keyGroup is porcupine's verdicts on one kind of store key, summed over
// epochs.
type keyGroup struct {
	keys, ops int
	verdicts  map[porcupine.CheckResult]int
}

// keyGroupOf names a store key's kind: its lock path's last element
// without the number, as soakPaths made it ("mutex", "rw", "sem",
// "multi", "leader").
func keyGroupOf(key string) string {
	base := key[strings.LastIndexByte(key, '/')+1:]
	if i := strings.LastIndexByte(base, '-'); i > 0 {
		return base[:i]
	}
	return base
}

// add adds an epoch's results, and its sections per second and faults to
// the picture of the run begun at start.
func (t *totals) add(start time.Time, e *epochResult) {
	t.epochs++
	for k, n := range e.rep.Sections {
		t.sections[k] += n
	}
	for k, n := range e.faults {
		t.faults[k] += n
	}
	for k, n := range e.rounds {
		t.rounds[fmt.Sprintf("%d-member %s", e.n, k)] += n
	}
	for _, v := range e.rep.Violations {
		t.violations[v.Rule]++
	}
	t.findings = append(t.findings, e.findings...)
	for _, l := range e.lin {
		t.storeOps += l.Ops
		t.recovered += l.Recovered
		t.keys++
		t.verdicts[l.Result]++
		g := t.groups[keyGroupOf(l.Key)]
		if g == nil {
			g = &keyGroup{verdicts: map[porcupine.CheckResult]int{}}
			t.groups[keyGroupOf(l.Key)] = g
		}
		g.keys++
		g.ops += l.Ops
		g.verdicts[l.Result]++
	}
	for _, n := range chaos.Expose(e.events).Stale {
		t.stale += n
	}
	for _, to := range e.rep.Takeovers {
		if to.Next != "" {
			t.takeovers++
			t.worstTake = max(t.worstTake, to.After)
		}
	}
	t.excused += e.excused
	t.orphans += e.orphans
	for _, ev := range e.events {
		at := time.Duration(ev.Time - start.UnixNano())
		if at < 0 {
			continue
		}
		if ev.Type == chaos.EvEnter {
			sec := int(at / time.Second)
			s := t.plot.Sections[ev.Recipe]
			for len(s) <= sec {
				s = append(s, 0)
			}
			s[sec]++
			t.plot.Sections[ev.Recipe] = s
		}
		if kind := markKind(ev, e.n); kind != "" {
			t.plot.Faults = append(t.plot.Faults, chaos.Mark{At: at, Kind: kind})
		}
	}
}

// markKind names a harness event's fault for the picture, "" if it is
// none (a SIGCONT, a heal, a restart's start).
func markKind(ev chaos.Event, n int) string {
	switch ev.Type {
	case chaos.EvKill:
		return "kill-" + ev.Note
	case chaos.EvStop:
		return "sigstop-" + ev.Note
	case chaos.EvPartition:
		kind, _, _ := strings.Cut(ev.Note, " ")
		return kind
	case chaos.EvSrvKill:
		kind, _, _ := strings.Cut(ev.Note, " ")
		return fmt.Sprintf("restart-%d %s", n, kind)
	}
	return ""
}

// finish writes the run's report (soak.md) and picture (soak.svg,
// soak.png) to the output folder, and checks the run's own targets: the
// long run's of docs/faults.md, or for a short run one of everything.
func (s *soak) finish() {
	t, tot := s.t, &s.total
	elapsed := time.Since(s.start)
	tot.plot.Title = fmt.Sprintf("soak of %s, %v: %d sections, %d faults", commit(), elapsed.Round(time.Second),
		tot.sectionsAll(), len(tot.plot.Faults))
	for _, name := range []string{"soak.svg", "soak.png"} {
		require.NoError(t, tot.plot.Write(filepath.Join(s.out, name)))
	}
	report := s.report(elapsed)
	require.NoError(t, os.WriteFile(filepath.Join(s.out, "soak.md"), []byte(report), 0o644))
	t.Logf("the soak's report, picture and kept timelines are in %s:\n%s", s.out, report)
	assert.Zero(t, tot.violationsAll(), "violations")
	assert.Zero(t, tot.orphans, "orphans")
	assert.Zero(t, tot.stale, "stale writes accepted")
	assert.Equal(t, tot.keys, tot.verdicts[porcupine.Ok], "store keys porcupine found linearizable")
	long := os.Getenv("SOAK_LONG") == "1"
	want := s.cfg.minEach
	if long {
		want = 1000
		assert.GreaterOrEqual(t, tot.sectionsAll(), s.cfg.sections, "sections")
	}
	for _, k := range processFaults {
		assert.GreaterOrEqual(t, tot.faults[k], want, "faults of kind %s", k)
	}
	for _, n := range s.cfg.sizes {
		careful := tot.rounds[fmt.Sprintf("%d-member %s", n, rollCareful)]
		careless := tot.rounds[fmt.Sprintf("%d-member %s", n, rollCareless)]
		assert.GreaterOrEqual(t, careful, s.cfg.minEach, "careful rolling rounds of the %d-member ensemble", n)
		assert.GreaterOrEqual(t, careless, s.cfg.minEach, "careless rolling rounds of the %d-member ensemble", n)
		if long {
			assert.GreaterOrEqual(t, careful+careless, 20, "rolling rounds of the %d-member ensemble", n)
		}
	}
	for _, r := range []string{chaos.RecipeMutex, chaos.RecipeRead, chaos.RecipeWrite, chaos.RecipeLease, chaos.RecipeMulti, chaos.RecipeLatch} {
		assert.Positive(t, tot.sections[r], "sections of %s", r)
	}
}

// report is the run's table, as docs/faults.md shows it.
func (s *soak) report(elapsed time.Duration) string {
	tot := &s.total
	var b strings.Builder
	host, _ := os.Hostname()
	fmt.Fprintf(&b, "soak of %s on %s (%d CPUs, %s), %v, %d epochs, ensembles of %v, T = %v, %d workers\n\n",
		commit(), host, runtime.NumCPU(), runtime.GOOS+"/"+runtime.GOARCH, elapsed.Round(time.Second), tot.epochs,
		s.cfg.sizes, s.cfg.timeout, s.cfg.procs)
	row := func(k, v string) { fmt.Fprintf(&b, "| %s | %s |\n", k, v) }
	b.WriteString("| measure | value |\n| --- | --- |\n")
	row("critical sections", fmt.Sprintf("%d (%.0f/s): %s", tot.sectionsAll(), float64(tot.sectionsAll())/elapsed.Seconds(), counts(tot.sections)))
	row("faults on workers", counts(tot.faults))
	row("rolling restart rounds", counts(tot.rounds))
	row("store operations judged by porcupine", fmt.Sprintf("%d on %d key histories (%d known only from the store); verdicts %v",
		tot.storeOps, tot.keys, tot.recovered, tot.verdicts))
	for _, g := range slices.Sorted(maps.Keys(tot.groups)) {
		kg := tot.groups[g]
		row("porcupine on "+g+" keys", fmt.Sprintf("%d operations on %d key histories: %d linearizable, %d not, %d undecided",
			kg.ops, kg.keys, kg.verdicts[porcupine.Ok], kg.verdicts[porcupine.Illegal], kg.verdicts[porcupine.Unknown]))
	}
	row("violations by the rules and porcupine", fmt.Sprintf("%d %s", tot.violationsAll(), counts(tot.violations)))
	row("stale writes accepted", fmt.Sprint(tot.stale))
	row("orphans", fmt.Sprint(tot.orphans))
	row("takeovers of an election", fmt.Sprintf("%d, the slowest %v; %d late with other faults about (not violations)",
		tot.takeovers, tot.worstTake.Round(time.Millisecond), tot.excused))
	row("ensemble findings", fmt.Sprintf("%d; ensembles replaced after they went inconsistent, by size: %v", len(tot.findings), tot.rebuilt))
	for _, f := range slices.Compact(slices.Sorted(slices.Values(tot.findings))) {
		fmt.Fprintf(&b, "\n- %s", f)
	}
	b.WriteString("\n")
	return b.String()
}

// commit names the checkout the run tested.
func commit() string {
	out, err := exec.Command("git", "describe", "--always", "--dirty").Output()
	if err != nil {
		return "an unknown commit"
	}
	return strings.TrimSpace(string(out))
}
