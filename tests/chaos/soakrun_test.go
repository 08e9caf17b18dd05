package chaos_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes/tests/chaos"
)

// porcupineBound bounds porcupine's check of one key's history in an
// epoch: thousands of operations, most of them one after another.
const porcupineBound = 2 * time.Minute

// epoch runs one epoch of a phase: fresh workers, faults and rolling
// restarts for the epoch's time, then the workers' end, the rules,
// porcupine and the members' health. It reports whether the ensemble went
// inconsistent.
func (ph *phase) epoch(t *testing.T, k int) (inconsistent bool) {
	s := ph.soak
	dir := filepath.Join(s.out, fmt.Sprintf("%d-member-%03d", ph.n, k))
	require.NoError(t, os.MkdirAll(dir, 0o755))
	ph.timeline = filepath.Join(dir, "timeline.jsonl")
	r := &run{t: t, cfg: config{procs: s.cfg.procs}, sc: scenario{name: "soak", timeout: s.cfg.timeout},
		admin: ph.admin, root: ph.root, servers: ph.servers, timeline: ph.timeline,
		procs: map[int]*proc{}, specOf: ph.spec, keepOrphans: true}
	var err error
	r.log, err = chaos.OpenLog(r.timeline)
	require.NoError(t, err)
	defer r.log.Close()
	r.view = newView(r.timeline)
	// Porcupine judges each epoch's histories from an empty store, as the
	// last epoch's workers have all gone.
	s.store.Reset()
	for slot := range s.cfg.procs {
		r.spawn(slot)
	}
	rs := startRestarts(ph, r.log)
	defer rs.stop()
	f := newSoakFaults(r, ph)
	defer func() {
		// A failure that ended the epoch early: no worker, stopped by
		// SIGSTOP or not, outlives the test.
		if t.Failed() {
			r.mu.Lock()
			for _, p := range r.all {
				_ = p.cmd.Process.Kill()
			}
			r.mu.Unlock()
		}
	}()
	end := time.Now().Add(s.cfg.epoch)
	if ph.end.Before(end) {
		end = ph.end
	}
	shown := time.Now()
	// A short run goes on past its time, by up to two epochs, until it
	// has had every kind of fault and of rolling round: they come at
	// random, and a busy machine makes holders rare.
	over := end.Add(2 * s.cfg.epoch)
	for (time.Now().Before(end) || s.cfg.minEach > 0 && time.Now().Before(over) && s.lacking(ph, f, rs)) &&
		(ph.target == 0 || ph.sections+r.view.count < ph.target) {
		f.step()
		if time.Since(shown) >= 10*time.Second {
			shown = time.Now()
			s.progress(t, ph, k, r, f, rs)
		}
		time.Sleep(20 * time.Millisecond) // the fault schedule's tick
	}
	f.stop()
	for _, err := range rs.stop() {
		t.Errorf("rolling restart: %v", err)
	}
	rep := r.finish()
	events, err := chaos.ReadTimeline(r.timeline)
	require.NoError(t, err)
	lin := chaos.Linearize(rep, events, s.store.Applied(), porcupineBound)
	excused := loneTakeovers(rep, events, s.cfg.timeout)
	rounds, _ := rs.counts()
	findings, inconsistent := ph.health(rs)
	for _, o := range r.leftover {
		// A node of an expired session that a member keeps: the
		// ensemble's doing, once it is inconsistent.
		if inconsistent {
			findings = append(findings, fmt.Sprintf("left on the inconsistent ensemble: %s", o))
		} else {
			t.Errorf("orphan: %s", o)
			r.orphans++
		}
	}
	byType := map[string]int{}
	for _, ev := range events {
		byType[ev.Type]++
	}
	slowest := "none"
	if d := slowestTakeover(rep); d > 0 {
		slowest = d.Round(time.Millisecond).String()
	}
	for i, fi := range findings {
		// What the recipes promised and kept meanwhile (the epoch's
		// verdicts), and what their liveness was: workers that gave up
		// waiting for their own loops or did not exit, and the slowest
		// election takeover.
		findings[i] = fmt.Sprintf("%s; in the %d-member phase's epoch %d: %d sections, %d losses told to holders, %d violations; "+
			"%d workers stuck, %d hung, the slowest election takeover %s",
			fi, ph.n, k, sectionsIn(rep), byType[chaos.EvLoss], len(rep.Violations),
			byType[chaos.EvStuck], byType[chaos.EvHung], slowest)
		t.Logf("finding: %s", findings[i])
	}
	ep := epochResult{n: ph.n, rep: rep, lin: lin, events: events, faults: f.counts(), rounds: rounds,
		findings: findings, excused: excused, orphans: r.orphans}
	s.total.add(s.start, &ep)
	ph.sections += ep.sections()
	bad := len(rep.Violations) > 0 || r.orphans > 0 || t.Failed()
	for i, v := range rep.Violations {
		if i == 20 {
			t.Errorf("... and %d more violations", len(rep.Violations)-20)
			break
		}
		t.Errorf("%s", v)
	}
	for _, l := range lin {
		if l.Result != porcupine.Ok {
			path, err := l.Visualize(dir)
			require.NoError(t, err)
			t.Logf("porcupine's picture of %s: %s", l.Key, path)
		}
	}
	if bad {
		t.Logf("the epoch's timeline and workers' output are kept in %s", dir)
	} else if !s.cfg.keep {
		require.NoError(t, os.RemoveAll(dir))
	}
	s.progress(t, ph, k, nil, nil, nil)
	return inconsistent
}

// lacking reports whether the run, with the epoch under way, has had
// fewer than minEach faults of some kind or rolling rounds of some kind.
func (s *soak) lacking(ph *phase, f *soakFaults, rs *restarts) bool {
	for _, k := range processFaults {
		if s.total.faults[k]+f.count[k] < s.cfg.minEach {
			return true
		}
	}
	rounds, _ := rs.counts()
	for _, k := range []string{rollCareful, rollCareless} {
		if s.total.rounds[fmt.Sprintf("%d-member %s", ph.n, k)]+rounds[k] < s.cfg.minEach {
			return true
		}
	}
	return false
}

// progress prints where the run stands: the epoch under way (r, f, rs) if
// any, and the totals of the epochs done.
func (s *soak) progress(t *testing.T, ph *phase, k int, r *run, f *soakFaults, rs *restarts) {
	elapsed := time.Since(s.start).Round(time.Second)
	done := s.total.sectionsAll()
	if r == nil {
		t.Logf("soak %v: %d-member epoch %d judged; %d sections in all (%.0f/s), faults %s, rolling rounds %s, violations %d, findings %d",
			elapsed, ph.n, k, done, float64(done)/time.Since(s.start).Seconds(), counts(s.total.faults),
			counts(s.total.rounds), s.total.violationsAll(), len(s.total.findings))
		return
	}
	rounds, findings := rs.counts()
	t.Logf("soak %v: %d-member epoch %d: %d sections so far (%d in all), faults %s, rolling rounds %s, findings %d",
		elapsed, ph.n, k, r.view.count, done+r.view.count, counts(f.counts()), counts(rounds), len(s.total.findings)+len(findings))
}

// counts formats a count by kind, in the kinds' order.
func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", k, m[k])
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

// loneTakeovers keeps, of the takeover rule's violations, those after a
// lone fault. The rule bounds a new leader's arrival after one fault on a
// healthy ensemble; the soak's faults overlap (the next in line may itself
// be stopped or cut off, or the ensemble without a quorum in a careless
// restart), and a late takeover with another fault within 2T before it
// and its arrival is no broken promise: it is counted as excused. Safety
// rules are not touched.
func loneTakeovers(rep *chaos.Report, events []chaos.Event, timeout time.Duration) (excused int) {
	var faults []chaos.Event
	for _, ev := range events {
		switch ev.Type {
		case chaos.EvKill, chaos.EvStop, chaos.EvCont, chaos.EvPartition, chaos.EvHeal, chaos.EvSrvKill, chaos.EvSrvStart:
			faults = append(faults, ev)
		}
	}
	rep.Violations = slices.DeleteFunc(rep.Violations, func(v chaos.Violation) bool { return v.Rule == chaos.RuleTakeover })
	if len(events) == 0 {
		return 0
	}
	last := events[len(events)-1].Time
	for _, to := range rep.Takeovers {
		until := last
		if to.Next != "" {
			until = to.From + int64(to.After)
		}
		if time.Duration(until-to.From) <= to.Limit {
			continue
		}
		own := faults[slices.IndexFunc(faults, func(ev chaos.Event) bool { return ev.Seq == to.FaultSeq })]
		other := slices.ContainsFunc(faults, func(ev chaos.Event) bool {
			undo := (ev.Type == chaos.EvCont || ev.Type == chaos.EvHeal) && ev.Target == own.Target && ev.Seq > own.Seq
			return ev.Seq != to.FaultSeq && !undo && ev.Time >= to.From-int64(2*timeout) && ev.Time <= until
		})
		if other {
			excused++
			continue
		}
		rep.Violations = append(rep.Violations, chaos.Violation{Rule: chaos.RuleTakeover, Seq: to.FaultSeq,
			Msg: fmt.Sprintf("after %s, a lone fault, no new term on %s within %v (%v)", to.Fault, to.Path, to.Limit,
				time.Duration(until-to.From))})
	}
	return excused
}

// slowestTakeover is the longest a fault's election waited for its next
// term, in an epoch's report; 0 if none did.
func slowestTakeover(rep *chaos.Report) time.Duration {
	var d time.Duration
	for _, to := range rep.Takeovers {
		if to.Next != "" {
			d = max(d, to.After)
		}
	}
	return d
}
