package chaos_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes/internal/testenv/curatortest"
	"github.com/zkrecipes/recipes/tests/chaos"
)

// The comparison of docs/faults.md: the same workers' sections — a read of
// the store, writes every pace for a hold longer than the session timeout
// (a holder at work), a last write — with Curator's InterProcessMutex, and
// with our Mutex writing without its token and with it, under the same
// faults: SIGSTOP of a holder, and a one-way cut of a holder's link while
// the data watches it keeps bring it notifications.
type compareRow struct {
	name    string
	curator bool // Java workers on Curator's InterProcessMutex (no token)
	token   bool // our workers write with their token
}

var compareRows = []compareRow{
	{name: "Curator InterProcessMutex, no token", curator: true},
	{name: "zkrecipes Mutex, no token"},
	{name: "zkrecipes Mutex, token checked by the store", token: true},
}

// compareConfig sizes the comparison: each row runs for run; COMPARE_RUN
// overrides it.
type compareConfig struct {
	run, timeout, hold, pace, gap time.Duration
	procs, paths                  int
}

func compareConfigFromEnv(t *testing.T) compareConfig {
	c := compareConfig{run: 12 * time.Second, timeout: 2 * time.Second, hold: 3 * time.Second,
		pace: 100 * time.Millisecond, gap: 2 * time.Second, procs: 4, paths: 2}
	if os.Getenv("SOAK_LONG") == "1" {
		c.run = 6 * time.Minute
	}
	if v := os.Getenv("COMPARE_RUN"); v != "" {
		d, err := time.ParseDuration(v)
		require.NoError(t, err, "COMPARE_RUN")
		c.run = d
	}
	return c
}

// compared is one row's result.
type compared struct {
	row        compareRow
	x          chaos.Exposure
	faults     map[string]int
	violations []chaos.Violation
	lin        []chaos.Linearity
}

func TestSoakBesideCurator(t *testing.T) {
	cfg := compareConfigFromEnv(t)
	// The long comparison's rows run in turn, each with the machine to
	// itself; those of make test, which judge only what must hold under
	// any load, side by side, on paths of their own, to keep it short.
	together := os.Getenv("SOAK_LONG") != "1"
	out := make([]compared, len(compareRows))
	var wg sync.WaitGroup
	for i, row := range compareRows {
		one := func() {
			t.Run(strings.ReplaceAll(row.name, " ", "_"), func(t *testing.T) { out[i] = runCompare(t, cfg, row) })
		}
		if together {
			wg.Go(one)
		} else {
			one()
		}
	}
	wg.Wait()
	out = slices.DeleteFunc(out, func(c compared) bool { return c.row.name == "" }) // rows not run, or failed
	table := compareTable(cfg, out)
	t.Logf("beside Curator:\n%s", table)
	if dir := os.Getenv("SOAK_OUT"); dir != "" {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "compare.md"), []byte(table), 0o644))
	}
	for _, c := range out {
		switch {
		case c.row.token:
			assert.Zero(t, sum(c.x.Stale), "%s: stale writes accepted", c.row.name)
			assert.Empty(t, c.violations, "%s: violations", c.row.name)
		case !c.row.curator:
			// The loss promise alone covers cuts: told before the next
			// holder can enter, the holder stops writing.
			assert.Zero(t, c.x.Stale[faultOneWay], "%s: stale writes accepted after one-way cuts", c.row.name)
			assert.Zero(t, c.x.Overlaps[faultOneWay], "%s: overlaps after one-way cuts", c.row.name)
		case os.Getenv("SOAK_LONG") == "1":
			// What README and docs warn of, measured.
			assert.Positive(t, c.x.Stale["sigstop"], "%s: stale writes after pauses", c.row.name)
			assert.Positive(t, c.x.Stale[faultOneWay], "%s: stale writes after one-way cuts", c.row.name)
		}
		assert.Positive(t, c.x.Sections, "%s: sections", c.row.name)
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// runCompare runs one row on the shared server, each worker behind a proxy
// of its own, and counts what the holders did to each other.
func runCompare(t *testing.T, cfg compareConfig, row compareRow) compared {
	store, err := chaos.NewStore(true)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, store.Close()) })
	sc := scenario{name: "compare", timeout: cfg.timeout, proxied: true, watch: true}
	r := newRun(t, config{procs: cfg.procs, runtime: cfg.run + time.Minute}, sc)
	var paths []string
	for i := range cfg.paths {
		paths = append(paths, fmt.Sprintf("%s/mutex-%d", r.root, i))
	}
	r.specOf = func(slot int) chaos.Spec {
		return chaos.Spec{Servers: []string{r.proxies[slot].Addr()}, SessionTimeout: cfg.timeout, Timeline: r.timeline,
			Loops: []chaos.Loop{{Recipe: chaos.RecipeMutex, Paths: paths}, {Recipe: chaos.RecipeMutex, Paths: paths}},
			Hold:  cfg.hold, Pace: cfg.pace, Runtime: cfg.run + time.Minute, Watch: r.configNodes(),
			Store: store.Addr(), Unguarded: !row.token}
	}
	if row.curator {
		peer := curatortest.EnsureT(t)
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		r.commandOf = func(slot int) *exec.Cmd {
			return peer.Command(ctx, "--session-ms="+strconv.Itoa(int(cfg.timeout.Milliseconds())), "soak-mutex",
				curatortest.ServersArg([]string{r.proxies[slot].Addr()}), strings.Join(paths, ","), store.Addr(),
				r.timeline, "2", strconv.Itoa(int(cfg.hold.Milliseconds())), strconv.Itoa(int(cfg.pace.Milliseconds())),
				strings.Join(r.configNodes(), ","))
		}
	}
	defer r.changeConfig()()
	for slot := range cfg.procs {
		r.spawn(slot)
	}
	faults := map[string]int{}
	end := time.Now().Add(cfg.run)
	for time.Now().Before(end) {
		time.Sleep(time.Duration(rand.ExpFloat64() * float64(cfg.gap))) // the next fault's moment, at random
		kind := "sigstop"
		if rand.IntN(2) == 0 {
			kind = faultOneWay
		}
		if compareFault(r, kind, cfg.timeout) {
			faults[kind]++
		}
	}
	rep := r.finish()
	events, err := chaos.ReadTimeline(r.timeline)
	require.NoError(t, err)
	lin := chaos.Linearize(rep, events, store.Applied(), porcupineBound)
	return compared{row: row, x: chaos.Expose(events), faults: faults, violations: rep.Violations, lin: lin}
}

// compareFault hurts a holder of either path with kind for between T and
// 2T, and reports whether it found one.
func compareFault(r *run, kind string, timeout time.Duration) bool {
	require.NoError(r.t, r.view.refresh())
	pid := 0
	for _, ev := range r.view.holds {
		if !r.view.dead[ev.Pid] {
			pid = ev.Pid
			break
		}
	}
	if pid == 0 {
		return false
	}
	lasting := timeout + rand.N(timeout)
	if kind == "sigstop" {
		require.NoError(r.t, syscall.Kill(pid, syscall.SIGSTOP))
		r.mustAwait("the worker stopped", r.bound(), func(*view) bool { return stopped(pid) })
		r.fault(chaos.Event{Type: chaos.EvStop, Target: pid, Note: "holder"})
		time.Sleep(lasting) // the pause's length, at random
		r.fault(chaos.Event{Type: chaos.EvCont, Target: pid})
		require.NoError(r.t, syscall.Kill(pid, syscall.SIGCONT))
		return true
	}
	p := r.proxies[r.proc(pid).slot]
	p.StallUp()
	note := "one-way cut of a holder"
	r.fault(chaos.Event{Type: chaos.EvPartition, Target: pid, Note: note})
	time.Sleep(lasting) // the cut's length, at random
	p.Restore()
	r.fault(chaos.Event{Type: chaos.EvHeal, Target: pid, Note: note})
	return true
}

// compareTable is the comparison's table, as docs/faults.md shows it.
func compareTable(cfg compareConfig, out []compared) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v per row, T = %v, %d worker processes of 2 loops on %d paths; sections hold %v, writing every %v\n\n",
		cfg.run, cfg.timeout, cfg.procs, cfg.paths, cfg.hold, cfg.pace)
	b.WriteString("| workers | sections | faults | overlapping holds (after a pause / a cut) | stale writes accepted (after a pause / a cut) | store histories linearizable |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	for _, c := range out {
		ok := 0
		for _, l := range c.lin {
			if l.Result == porcupine.Ok {
				ok++
			}
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %d (%d / %d) | %d (%d / %d) | %d of %d |\n", c.row.name, c.x.Sections, counts(c.faults),
			sum(c.x.Overlaps), c.x.Overlaps["sigstop"], c.x.Overlaps[faultOneWay],
			sum(c.x.Stale), c.x.Stale["sigstop"], c.x.Stale[faultOneWay], ok, len(c.lin))
	}
	return b.String()
}
