package chaos_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes/tests/chaos"
)

// scenario is one kind of fault, run in rounds against worker processes that
// each take a Mutex, an RWMutex, a Semaphore and a MultiLock in a loop.
type scenario struct {
	name     string
	timeout  time.Duration // the workers' session timeout T
	ensemble bool          // a 3-server ensemble instead of the shared server
	isolate  bool          // an ensemble with proxied peer links; each worker talks to one follower
	proxied  bool          // each worker reaches the server through its own proxy
	watch    bool          // workers keep data watches on config nodes changed every 250 ms
	noLock   bool          // negative control: workers skip the lock
	fault    func(r *run)  // one round of the fault
	// hold overrides the time inside each section; idle is how long a
	// partition waits after finding the holder before it cuts, so that
	// the holder has been quiet for a while (an idle holder, §2).
	hold, idle time.Duration
	// partition: every loss after this scenario's faults must be noticed at
	// least T/10 before the next enter.
	partition bool
	// expect checks what the scenario must show besides the rules.
	expect func(t *testing.T, r *run, rep *chaos.Report)
}

var scenarios = []scenario{{
	name: "kill-holder", timeout: 2 * time.Second, fault: killHolder,
}, {
	name: "kill-waiter", timeout: 2 * time.Second, fault: killWaiter,
}, {
	name: "sigstop-holder", timeout: 2 * time.Second, fault: stopHolder,
	expect: func(t *testing.T, r *run, rep *chaos.Report) {
		n := 0
		for _, f := range rep.Frozen {
			if f.Superseded && strings.HasPrefix(f.End, chaos.EvLoss) {
				n++
			}
		}
		assert.GreaterOrEqual(t, n, r.cfg.rounds, "stopped holders superseded and then told of their loss: %+v", rep.Frozen)
	},
}, {
	name: "leader-kill", timeout: 4 * time.Second, ensemble: true, fault: serverKill(true),
}, {
	name: "follower-kill", timeout: 4 * time.Second, ensemble: true, fault: serverKill(false),
}, {
	name: "black-hole", timeout: 4 * time.Second, proxied: true, fault: partition("black hole", blackHole),
	hold: 3 * time.Second, idle: time.Second, partition: true,
}, {
	name: "one-way", timeout: 4 * time.Second, proxied: true, watch: true, fault: partition("one-way cut", oneWay),
	hold: 3 * time.Second, idle: time.Second, partition: true,
}, {
	name: "isolated-follower", timeout: 4 * time.Second, isolate: true, fault: isolateFollower,
	hold: 3 * time.Second, idle: time.Second, partition: true,
}}

// config sizes a run; see configFromEnv.
type config struct {
	procs    int           // worker processes
	rounds   int           // fault rounds at least
	sections int           // go on with rounds until this many sections (0: no minimum)
	cuts     int           // rounds of a partition scenario, whose holds are long: no section minimum
	hold     time.Duration // time inside each section
	runtime  time.Duration // each worker's own bound
}

// configFromEnv returns the short run of `make test`, or with CHAOS_LONG=1
// the long run of `make chaos`; CHAOS_PROCS, CHAOS_ROUNDS, CHAOS_SECTIONS and
// CHAOS_CUTS override either.
func configFromEnv(t *testing.T) config {
	t.Helper()
	c := config{procs: 4, rounds: 2, cuts: 2, hold: 5 * time.Millisecond, runtime: 5 * time.Minute}
	if os.Getenv("CHAOS_LONG") == "1" {
		c = config{procs: 8, rounds: 3, sections: 2000, cuts: 20, hold: 2 * time.Millisecond, runtime: 2 * time.Hour}
	}
	for name, dst := range map[string]*int{"CHAOS_PROCS": &c.procs, "CHAOS_ROUNDS": &c.rounds,
		"CHAOS_SECTIONS": &c.sections, "CHAOS_CUTS": &c.cuts} {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			require.NoError(t, err, name)
			*dst = n
		}
	}
	return c
}

// maxRounds stops a long run that makes no progress.
const maxRounds = 10000

func TestFaults(t *testing.T) {
	cfg := configFromEnv(t)
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) { runScenario(t, cfg, sc) })
	}
}

// TestNoLockIsFlagged is the negative control with real processes: workers
// that skip the lock must be caught by the checker.
func TestNoLockIsFlagged(t *testing.T) {
	cfg := configFromEnv(t)
	sc := scenario{name: "no-lock", timeout: 2 * time.Second, noLock: true}
	r := newRun(t, cfg, sc)
	for slot := range cfg.procs {
		r.spawn(slot)
	}
	r.mustAwait("sections", r.bound(), func(v *view) bool { return v.count >= 200 })
	rep := r.finish()
	logReport(t, rep)
	assert.NotEmpty(t, rep.Broken(chaos.RuleExclusion), "workers without the lock overlapped, and the checker must say so")
}

func runScenario(t *testing.T, cfg config, sc scenario) {
	r := newRun(t, cfg, sc)
	if sc.watch {
		defer r.changeConfig()()
	}
	for slot := range cfg.procs {
		r.spawn(slot)
	}
	r.mustAwait("every worker in a section", r.bound(), func(v *view) bool { return v.count >= cfg.procs })
	rounds, sections := cfg.rounds, cfg.sections
	if sc.partition {
		rounds, sections = cfg.cuts, 0
	}
	for round := 0; round < maxRounds && (round < rounds || r.view.count < sections); round++ {
		sc.fault(r)
	}
	// A short run can end its rounds before every loop has had a turn.
	r.mustAwait("a section of every recipe", r.bound(), func(v *view) bool {
		return v.entered[chaos.RecipeMutex] > 0 && v.entered[chaos.RecipeLease] > 0 && v.entered[chaos.RecipeMulti] > 0 &&
			v.entered[chaos.RecipeRead]+v.entered[chaos.RecipeWrite] > 0
	})
	rep := r.finish()
	logReport(t, rep)
	assert.GreaterOrEqual(t, rep.Faults, rounds, "faults injected")
	for _, recipe := range []string{chaos.RecipeMutex, chaos.RecipeLease, chaos.RecipeMulti} {
		assert.Positive(t, rep.Sections[recipe], "%s sections", recipe)
	}
	assert.Positive(t, rep.Sections[chaos.RecipeRead]+rep.Sections[chaos.RecipeWrite], "rw sections")
	assert.Positive(t, rep.Accepted, "accepted guarded writes")
	if sc.expect != nil {
		sc.expect(t, r, rep)
	}
	for _, v := range rep.Violations {
		t.Errorf("%s", v)
	}
	if !sc.partition {
		return
	}
	measured := map[string]bool{} // partitions with a measured loss
	for _, m := range rep.Margins {
		if m.FaultEv != chaos.EvPartition || m.Next == "" {
			continue
		}
		measured[m.Fault] = true
		if m.Margin < sc.timeout/10 {
			t.Errorf("margin %v < T/10 for %s after %s", m.Margin, m.Hold, m.Fault)
		}
	}
	assert.GreaterOrEqual(t, len(measured), rounds, "partitions after which a loss was measured")
}

// logReport writes the run's figures to the test log.
func logReport(t *testing.T, rep *chaos.Report) {
	t.Helper()
	total := 0
	for _, n := range rep.Sections {
		total += n
	}
	t.Logf("sections %d %v; guarded writes accepted %d, refused %d; faults %d; violations %d",
		total, rep.Sections, rep.Accepted, rep.Rejected, rep.Faults, len(rep.Violations))
	for _, m := range rep.Margins {
		next := "nobody entered after"
		if m.Next != "" {
			next = "next enter " + m.Margin.String() + " later (" + m.Next + ")"
		}
		t.Logf("loss %s pid %d: noticed %v after %s; %s", m.Hold, m.Pid, m.Noticed, m.Fault, next)
	}
	for _, f := range rep.Frozen {
		t.Logf("stopped hold %s pid %d: superseded %v, ended by %q %v after SIGCONT, %d writes refused",
			f.Hold, f.Pid, f.Superseded, f.End, f.AfterCont, f.Rejected)
	}
}
