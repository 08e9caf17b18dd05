package chaos

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Rules, as named in a Violation.
const (
	RuleExclusion = "exclusion"         // two holds that exclude each other overlapped
	RuleLossOrder = "loss-before-enter" // someone entered before a lost holder was told
	RuleFencing   = "fencing"           // a superseded or ended holder's write was accepted
	RuleLiveness  = "liveness"          // a worker hung, got stuck, or vanished
	RuleTimeline  = "timeline"          // the timeline contradicts itself
	RuleTakeover  = "takeover"          // no new leader within T + TakeoverBound (ServerTakeoverBound) of a fault on the leader
)

// Violation is one broken promise, shown at the event with sequence Seq.
type Violation struct {
	Rule string
	Seq  int
	Msg  string
}

func (v Violation) String() string { return fmt.Sprintf("%s at #%d: %s", v.Rule, v.Seq, v.Msg) }

// Margin measures one loss: how long before the next conflicting enter the
// lost holder was told. A negative margin is also a RuleLossOrder violation.
type Margin struct {
	Hold    string
	Pid     int
	Path    string
	Fault   string        // the last harness fault event before the loss, "" if none
	FaultEv string        // that event's type
	Noticed time.Duration // from that fault to the loss being logged
	Margin  time.Duration // from the loss to the next conflicting enter
	Next    string        // the hold that entered next; "" if none did (Margin is then 0)
}

// Frozen describes a hold whose process was stopped (SIGSTOP) while it held.
type Frozen struct {
	Hold       string
	Pid        int
	Superseded bool          // lost, and another hold took its place (an enter that would conflict with it)
	End        string        // EvExit, EvLoss, "loss (from Release)", EvKill, or "" if it never ended
	AfterCont  time.Duration // from the SIGCONT to the end being logged
	Rejected   int           // its guarded writes the server refused
}

// Report is what Check found.
type Report struct {
	Sections   map[string]int // enters per recipe
	Accepted   int            // guarded writes the server accepted
	Rejected   int            // guarded writes refused or of unknown outcome
	Faults     int            // harness fault actions
	Violations []Violation
	Margins    []Margin
	Frozen     []Frozen
	Takeovers  []Takeover
}

// Broken returns the violations of the given rules (all if none given).
func (r *Report) Broken(rules ...string) []Violation {
	var out []Violation
	for _, v := range r.Violations {
		if len(rules) == 0 || slices.Contains(rules, v.Rule) {
			out = append(out, v)
		}
	}
	return out
}

func (r *Report) add(rule string, seq int, format string, args ...any) {
	r.Violations = append(r.Violations, Violation{Rule: rule, Seq: seq, Msg: fmt.Sprintf(format, args...)})
}

// hold is one acquisition as the timeline tells it.
type hold struct {
	enter     Event
	end       *Event  // the first exit or loss; nil if none
	unlockErr *Event  // a loss logged after the exit: Release reported the hold lost
	killedAt  int     // seq of the kill -9 that ended it, 0 if none
	frozenAt  *Event  // the SIGSTOP that caught it holding
	taken     *Event  // the first enter that took its place while it was exempt
	contAt    *Event  // the SIGCONT after that
	writes    []Event // its write events
	measured  bool    // its margin is recorded
	rejected  int
	tokenByPt map[string]int64
}

func (h *hold) id() string    { return h.enter.Hold }
func (h *hold) lost() bool    { return h.loss() != nil }
func (h *hold) shared() bool  { return h.enter.Recipe == RecipeRead || h.enter.Recipe == RecipeLease }
func (h *hold) writers() bool { return !h.shared() } // its writes must be totally ordered
// loss returns the event that told the holder of its loss: its end, or a
// loss logged after its exit when Release reported that the hold had been lost
// before it was released.
func (h *hold) loss() *Event {
	if h.end != nil && h.end.Type == EvLoss {
		return h.end
	}
	return h.unlockErr
}

func (h *hold) token(p string) int64 {
	return h.tokenByPt[p]
}

// exempt reports whether the hold is excused from telling its loss before
// the next enter: its process was stopped while it held, so it could not be
// told anything, and the hold did end (by loss or kill), not by a normal exit.
// The promise for such a hold is fencing instead (see checkFrozen).
func (h *hold) exempt() bool {
	return h.frozenAt != nil && (h.lost() || h.killedAt != 0)
}

// conflict reports whether holds (all on path p) may not be held at once:
// more than one exclusive hold, an exclusive hold with a shared one, or more
// leases than the semaphore's limit.
func conflict(holds []*hold) bool {
	excl, shared, limit := 0, 0, 0
	for _, h := range holds {
		switch {
		case h.enter.Recipe == RecipeLease:
			shared++
			limit = h.enter.Limit
		case h.shared():
			shared++
		default:
			excl++
		}
	}
	return excl > 1 || (excl > 0 && shared > 0) || (limit > 0 && shared > limit)
}

// Check replays a timeline and reports every broken promise; see
// docs/faults.md for the rules. It is a pure function of the events, which
// must be in append order.
func Check(events []Event) *Report {
	r := &Report{Sections: map[string]int{}}
	holds := collect(r, events)
	faults := withoutMissedStops(r, events)
	sweep(r, faults, holds)
	checkFencing(r, events, holds)
	checkTakeovers(r, faults, holds)
	checkLiveness(r, events, holds)
	attribute(r, faults, holds)
	return r
}

// collect builds the holds from their enter events and attaches their end
// and write events, and the kills that ended them.
func collect(r *Report, events []Event) map[string]*hold {
	holds := map[string]*hold{}
	open := map[int][]*hold{} // by pid, holds without an end yet
	for _, ev := range events {
		switch ev.Type {
		case EvEnter:
			if holds[ev.Hold] != nil || len(ev.Tokens) != len(ev.Paths) {
				r.add(RuleTimeline, ev.Seq, "malformed or repeated enter of %s", ev.Hold)
				continue
			}
			h := &hold{enter: ev, tokenByPt: map[string]int64{}}
			for i, p := range ev.Paths {
				h.tokenByPt[p] = ev.Tokens[i]
			}
			holds[ev.Hold] = h
			open[ev.Pid] = append(open[ev.Pid], h)
			r.Sections[ev.Recipe]++
		case EvExit, EvLoss:
			h := holds[ev.Hold]
			if h == nil {
				r.add(RuleTimeline, ev.Seq, "%s of unknown hold %s", ev.Type, ev.Hold)
			} else if h.end == nil {
				h.end = &ev
			} else if h.end.Type == EvExit && ev.Type == EvLoss && h.unlockErr == nil {
				h.unlockErr = &ev
			}
		case EvWrite:
			if h := holds[ev.Hold]; h != nil {
				h.writes = append(h.writes, ev)
			} else {
				r.add(RuleTimeline, ev.Seq, "write of unknown hold %s", ev.Hold)
			}
		case EvKill:
			for _, h := range open[ev.Target] {
				if h.end == nil {
					h.killedAt = ev.Seq
				}
			}
			delete(open, ev.Target)
		}
	}
	return holds
}

// sweep walks the timeline in append order with the set of live holds per
// path, checking exclusion and loss order at every enter and measuring the
// margin of every loss.
func sweep(r *Report, events []Event, holds map[string]*hold) {
	live := map[string][]*hold{}   // by path
	ghosts := map[string][]*hold{} // lost holds awaiting the next conflicting enter, by path
	byPid := map[int][]*hold{}     // live holds by pid
	waited := map[string]int{}     // by hold: the sequence of its wait
	stops := map[int]*Event{}      // by pid: its last SIGSTOP
	conts := map[int]*Event{}      // by pid: its last SIGCONT
	drop := func(h *hold) {
		for _, p := range h.enter.Paths {
			live[p] = slices.DeleteFunc(live[p], func(o *hold) bool { return o == h })
		}
		byPid[h.enter.Pid] = slices.DeleteFunc(byPid[h.enter.Pid], func(o *hold) bool { return o == h })
	}
	for i := range events {
		ev := events[i]
		switch ev.Type {
		case EvEnter:
			b := holds[ev.Hold]
			if b == nil || b.enter.Seq != ev.Seq {
				continue
			}
			if st := stops[ev.Pid]; st != nil && waited[ev.Hold] != 0 && st.Seq > waited[ev.Hold] {
				// Stopped while acquiring: the acquisition may have
				// completed on resumption for a session that expired
				// during the stop. The same promise as for a stopped
				// holder applies.
				b.frozenAt = st
				if c := conts[ev.Pid]; c != nil && c.Seq > st.Seq {
					b.contAt = c
				}
			}
			for _, p := range ev.Paths {
				entered(r, b, p, live[p])
				ghosts[p] = measure(r, b, p, live[p], ghosts[p])
				live[p] = append(live[p], b)
			}
			byPid[ev.Pid] = append(byPid[ev.Pid], b)
		case EvExit, EvLoss:
			h := holds[ev.Hold]
			if h == nil {
				continue
			}
			if h.end.Seq == ev.Seq {
				drop(h)
			}
			if l := h.loss(); l != nil && l.Seq == ev.Seq && !h.exempt() && !h.measured {
				for _, p := range h.enter.Paths {
					ghosts[p] = append(ghosts[p], h)
				}
				h.measured = true
				r.Margins = append(r.Margins, Margin{Hold: h.id(), Pid: h.enter.Pid})
			}
		case EvKill:
			for _, h := range slices.Clone(byPid[ev.Target]) {
				drop(h)
			}
		case EvWait:
			waited[ev.Hold] = ev.Seq
		case EvStop:
			stops[ev.Target] = &events[i]
			for _, h := range byPid[ev.Target] {
				if h.frozenAt == nil {
					h.frozenAt = &events[i]
				}
			}
		case EvCont:
			conts[ev.Target] = &events[i]
			for _, h := range byPid[ev.Target] {
				if h.frozenAt != nil && h.contAt == nil {
					h.contAt = &events[i]
				}
			}
		}
	}
}

// entered checks the enter of b on p against the holds live there.
func entered(r *Report, b *hold, p string, live []*hold) {
	if b.exempt() {
		return // acquired on resumption for a session lost during a stop
	}
	var considered, exempt []*hold
	for _, h := range live {
		if h.exempt() {
			exempt = append(exempt, h)
		} else {
			considered = append(considered, h)
		}
	}
	for _, e := range exempt {
		if e.taken == nil && conflict(append(slices.Clone(considered), b, e)) {
			e.taken = &b.enter
		}
	}
	if !conflict(append(slices.Clone(considered), b)) {
		return
	}
	var late, others []string
	for _, h := range considered {
		if h.lost() {
			late = append(late, h.id())
			if !h.measured {
				h.measured = true
				r.Margins = append(r.Margins, Margin{Hold: h.id(), Pid: h.enter.Pid, Path: p, Next: b.id(),
					Margin: time.Duration(b.enter.Time - h.loss().Time)})
			}
		} else {
			others = append(others, h.id())
		}
	}
	if len(late) > 0 {
		r.add(RuleLossOrder, b.enter.Seq, "%s entered %s before %s logged the loss of its hold",
			b.id(), p, strings.Join(late, ", "))
		return
	}
	r.add(RuleExclusion, b.enter.Seq, "%s (%s) entered %s while %s held it",
		b.id(), b.enter.Recipe, p, strings.Join(others, ", "))
}

// measure completes the margin of each ghost (a hold lost earlier on p)
// whose place b now takes, and returns the ghosts still waiting.
func measure(r *Report, b *hold, p string, live, ghosts []*hold) []*hold {
	var considered []*hold
	for _, h := range live {
		if !h.exempt() {
			considered = append(considered, h)
		}
	}
	withB := append(slices.Clone(considered), b)
	return slices.DeleteFunc(ghosts, func(g *hold) bool {
		if g == b || !conflict(append(slices.Clone(withB), g)) {
			return false
		}
		for i := range r.Margins {
			m := &r.Margins[i]
			if m.Hold == g.id() && m.Next == "" {
				m.Path, m.Next = p, b.id()
				m.Margin = time.Duration(b.enter.Time - g.loss().Time)
			}
		}
		return true
	})
}

// attribute names, for each margin, the last fault the harness injected
// before the loss was logged, and how long the loss took to be noticed.
func attribute(r *Report, events []Event, holds map[string]*hold) {
	var faults []Event
	for _, ev := range events {
		switch ev.Type {
		case EvKill, EvStop, EvPartition, EvSrvKill:
			faults = append(faults, ev)
		}
	}
	r.Faults = len(faults)
	for i := range r.Margins {
		m := &r.Margins[i]
		end := holds[m.Hold].loss()
		n := sort.Search(len(faults), func(i int) bool { return faults[i].Seq > end.Seq })
		if n > 0 {
			m.Fault, m.FaultEv = faults[n-1].String(), faults[n-1].Type
			m.Noticed = time.Duration(end.Time - faults[n-1].Time)
		}
	}
}
