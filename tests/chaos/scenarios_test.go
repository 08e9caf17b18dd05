package chaos_test

import (
	"fmt"
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
// each take a Mutex, an RWMutex, a Semaphore and a MultiLock in a loop, or
// in an election scenario campaign in an election.Runner.
type scenario struct {
	name     string
	timeout  time.Duration // the workers' session timeout T
	ensemble bool          // a 3-server ensemble instead of the shared server
	isolate  bool          // an ensemble with proxied peer links; each worker talks to one follower
	proxied  bool          // each worker reaches the server through its own proxy
	watch    bool          // workers keep data watches on config nodes changed every 250 ms
	noLock   bool          // negative control: workers skip the lock
	blind    bool          // a section's last writes go out even after its hold ended (Spec.Blind)
	fault    func(r *run)  // one round of the fault
	// election: each worker campaigns at one election path with a Latch
	// in an election.Runner, and the faults hurt the leader; procs of
	// them. Its rounds are counted like a partition scenario's (cuts).
	election bool
	procs    int
	// hold overrides the time inside each section; pace is the time
	// between guarded writes inside it (0: only at its start and end);
	// idle is how long a partition waits after finding the holder before
	// it cuts, so that the holder has been quiet for a while (an idle
	// holder, §2).
	hold, pace, idle time.Duration
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
	name: "sigstop-holder", timeout: 2 * time.Second, fault: stopHolder, expect: stoppedLost,
}, {
	name: "leader-kill", timeout: 4 * time.Second, ensemble: true, fault: serverKill(ensembleLeader),
}, {
	name: "follower-kill", timeout: 4 * time.Second, ensemble: true, fault: serverKill(ensembleFollower),
}, {
	name: "black-hole", timeout: 4 * time.Second, proxied: true, fault: partition("black hole", blackHole),
	hold: 3 * time.Second, idle: time.Second, partition: true,
}, {
	name: "one-way", timeout: 4 * time.Second, proxied: true, watch: true, fault: partition("one-way cut", oneWay),
	hold: 3 * time.Second, idle: time.Second, partition: true,
}, {
	name: "isolated-follower", timeout: 4 * time.Second, isolate: true, fault: isolateFollower,
	hold: 3 * time.Second, idle: time.Second, partition: true,
}, {
	name: "election-kill", timeout: 2 * time.Second, fault: killHolder,
	election: true, procs: electionProcs, hold: time.Second, pace: electionPace, expect: tookOver(chaos.EvKill),
}, {
	name: "election-sigstop", timeout: 2 * time.Second, fault: stopHolder,
	election: true, procs: electionProcs, hold: time.Second, pace: electionPace, blind: true,
	expect: func(t *testing.T, r *run, rep *chaos.Report) {
		stoppedLost(t, r, rep)
		tookOver(chaos.EvStop)(t, r, rep)
		// Fencing did the work: every superseded stopped leader's last
		// writes, which go out blind after SIGCONT (a leader that learns
		// of its loss at once would otherwise send none), were refused.
		for _, f := range rep.Frozen {
			if f.Superseded {
				assert.Positive(t, f.Rejected, "no write of the stopped leader %s was refused: %+v", f.Hold, f)
			}
		}
	},
}, {
	name: "election-server-restart", timeout: 4 * time.Second, ensemble: true, fault: serverKill(holdersServer),
	election: true, procs: electionProcs, hold: time.Second, pace: electionPace, expect: tookOver(chaos.EvSrvKill),
}, {
	name: "election-one-way", timeout: 4 * time.Second, proxied: true, watch: true, fault: partition("one-way cut", oneWay),
	election: true, procs: electionProcs, hold: 3 * time.Second, pace: electionPace, idle: time.Second, partition: true,
	expect: tookOver(chaos.EvPartition),
}}

// The election scenarios' workers: as many as the issue asks for, whatever
// the run's size, and a leader writes its token every electionPace.
const (
	electionProcs = 5
	electionPace  = 100 * time.Millisecond
)

// stoppedLost checks that the stop rounds caught holders that another
// process superseded during the stop and that were then told of their loss.
func stoppedLost(t *testing.T, r *run, rep *chaos.Report) {
	t.Helper()
	n := 0
	for _, f := range rep.Frozen {
		if f.Superseded && strings.HasPrefix(f.End, chaos.EvLoss) {
			n++
		}
	}
	assert.GreaterOrEqual(t, n, r.rounds(), "stopped holders superseded and then told of their loss: %+v", rep.Frozen)
}

// tookOver checks that a takeover was measured after every round's fault
// (of type fault) on the leader, the checker judging each one; and that
// every old leader told of its loss was told before the next leader
// entered, so before its first write (the checker's loss-before-enter rule
// says so too).
func tookOver(fault string) func(t *testing.T, r *run, rep *chaos.Report) {
	return func(t *testing.T, r *run, rep *chaos.Report) {
		t.Helper()
		for _, m := range rep.Margins {
			if m.Next != "" && m.Margin < 0 {
				t.Errorf("%s was told of its loss %v after %s entered", m.Hold, -m.Margin, m.Next)
			}
		}
		n, kept := 0, 0
		for _, to := range rep.Takeovers {
			if to.FaultEv == fault && to.Next != "" {
				n++
				if to.Kept {
					kept++
				}
			}
		}
		t.Logf("takeovers after a %s: %d, %d of them after a term that outlived it", fault, n, kept)
		assert.GreaterOrEqual(t, n, r.rounds(), "takeovers measured after a %s: %+v", fault, rep.Takeovers)
	}
}

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

// rounds returns how many fault rounds the run makes at least.
func (r *run) rounds() int {
	if r.sc.partition || r.sc.election {
		return r.cfg.cuts
	}
	return r.cfg.rounds
}

// sections returns how many sections the run goes on to at least: none in a
// scenario whose sections are long.
func (r *run) sections() int {
	if r.sc.partition || r.sc.election {
		return 0
	}
	return r.cfg.sections
}

// everyRecipe reports whether the timeline has a section of every recipe
// the workers take.
func (r *run) everyRecipe(entered map[string]int) bool {
	if r.sc.election {
		return entered[chaos.RecipeLatch] > 0
	}
	return entered[chaos.RecipeMutex] > 0 && entered[chaos.RecipeLease] > 0 && entered[chaos.RecipeMulti] > 0 &&
		entered[chaos.RecipeRead]+entered[chaos.RecipeWrite] > 0
}

func runScenario(t *testing.T, cfg config, sc scenario) {
	if sc.procs > 0 {
		cfg.procs = sc.procs
	}
	r := newRun(t, cfg, sc)
	if sc.watch {
		defer r.changeConfig()()
	}
	for slot := range cfg.procs {
		r.spawn(slot)
	}
	// Every worker in a section; in an election, where sections are
	// terms one after the other, a first leader.
	r.mustAwait("the first sections", r.bound(), func(v *view) bool { return v.count >= cfg.procs || (sc.election && v.count > 0) })
	rounds, sections := r.rounds(), r.sections()
	for round := 0; round < maxRounds && (round < rounds || r.view.count < sections); round++ {
		sc.fault(r)
	}
	// A short run can end its rounds before every loop has had a turn.
	r.mustAwait("a section of every recipe", r.bound(), func(v *view) bool { return r.everyRecipe(v.entered) })
	rep := r.finish()
	logReport(t, rep)
	assert.GreaterOrEqual(t, rep.Faults, rounds, "faults injected")
	assert.True(t, r.everyRecipe(rep.Sections), "a section of every recipe: %v", rep.Sections)
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
	for _, to := range rep.Takeovers {
		from := "the fault"
		if to.Kept {
			from = "its resignation (the term outlived the fault)"
		}
		next := "no new leader"
		if to.Next != "" {
			next = fmt.Sprintf("%s took over %v after %s (limit %v)", to.Next, to.After, from, to.Limit)
		}
		t.Logf("term %s pid %d hit by %s: %s", to.Hold, to.Pid, to.Fault, next)
	}
}
