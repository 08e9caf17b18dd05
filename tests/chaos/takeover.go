package chaos

import (
	"maps"
	"slices"
	"time"
)

// TakeoverBound is how much longer than the session timeout T a new leader
// may take to follow a fault on the leader's own process (kill -9, SIGSTOP,
// a cut): from the fault to the next term's enter. A process the server no
// longer hears from has its session expired within T of the last packet it
// heard, which came before the fault, rounded up to a tick (100 ms in the
// harness); then its node goes, and the next in line hears of it through
// its watch, lists the children and logs its enter: loopback round trips.
// The rest is headroom for a loaded 2-core machine and the race detector;
// docs/faults.md gives the figures.
const TakeoverBound = time.Second

// ServerTakeoverBound is the same after a kill of the ensemble member the
// leader's session is on, from the kill, or from the old leader's
// resignation if its term outlived the kill (its session moved to another
// member). The session moves, or, if the killed member led the ensemble,
// the others first elect a leader that runs the sessions' clocks from its
// start; a participant whose campaign failed meanwhile backs off.
const ServerTakeoverBound = 2 * time.Second

// takeoverBound is the bound after a fault of type fault.
func takeoverBound(fault string) time.Duration {
	if fault == EvSrvKill {
		return ServerTakeoverBound
	}
	return TakeoverBound
}

// Takeover measures how soon a new leader followed a fault that hit a term
// (a hold of an election recipe live at the fault).
type Takeover struct {
	Hold     string // the term live at the fault
	Pid      int
	Path     string
	Fault    string // the fault event, as Event.String
	FaultEv  string // its type
	FaultSeq int    // its sequence
	From     int64  // when the takeover's clock started: the fault, or the resignation if Kept
	// Kept is set when the term outlived a server kill and ended by
	// resigning: the takeover is then measured from its exit.
	Kept  bool
	Next  string        // the next term; "" if none
	After time.Duration // from the fault (or the resignation) to Next's enter
	Limit time.Duration // T + the fault's bound, T the old leader's session timeout
}

// term reports whether h is a term of an election, whose takeover after a
// fault Check measures.
func (h *hold) term() bool { return h.enter.Recipe == RecipeLatch }

// checkTakeovers measures, for every harness fault and every term live at
// it (in append order) that the fault hit — the term of the process killed,
// stopped or partitioned, or any term for a server kill — the time until
// the next term on the same path entered. That may be a term of the same
// process, campaigning again in a new session after it lost its term (as
// every participant whose session a server restart cost does): it is a new
// leader all the same. The time must be at most T + the fault's bound; a
// takeover that never came is a violation too if the timeline goes on past
// that limit.
func checkTakeovers(r *Report, events []Event, holds map[string]*hold) {
	timeouts := map[int]time.Duration{} // by pid: its latest session's timeout
	live := map[string][]*hold{}        // by path: terms entered and not yet ended
	var open []int                      // indexes into r.Takeovers still without a Next
	from := map[int]int64{}             // by index into r.Takeovers: when its clock started
	drop := func(gone func(*hold) bool) {
		for p, hs := range live {
			live[p] = slices.DeleteFunc(hs, gone)
		}
	}
	for _, ev := range events {
		switch ev.Type {
		case EvSession:
			timeouts[ev.Pid] = ev.Timeout
		case EvEnter:
			b := holds[ev.Hold]
			if b == nil || b.enter.Seq != ev.Seq || !b.term() {
				continue
			}
			open = slices.DeleteFunc(open, func(i int) bool {
				t := &r.Takeovers[i]
				if !slices.Contains(ev.Paths, t.Path) {
					return false
				}
				t.Next, t.After = b.id(), time.Duration(ev.Time-from[i])
				if t.After > t.Limit {
					r.add(RuleTakeover, ev.Seq, "%s took over %s %v after %s, over T + %v = %v",
						b.id(), t.Path, t.After, t.Fault, takeoverBound(t.FaultEv), t.Limit)
				}
				return true
			})
			for _, p := range ev.Paths {
				live[p] = append(live[p], b)
			}
		case EvExit, EvLoss:
			if h := holds[ev.Hold]; h != nil && h.end != nil && h.end.Seq == ev.Seq {
				drop(func(o *hold) bool { return o == h })
			}
		}
		var hit func(*hold) bool
		switch ev.Type {
		case EvKill, EvStop, EvPartition:
			hit = func(h *hold) bool { return h.enter.Pid == ev.Target }
		case EvSrvKill:
			hit = func(*hold) bool { return true }
		default:
			continue
		}
		for _, p := range slices.Sorted(maps.Keys(live)) {
			for _, h := range live[p] {
				if !hit(h) {
					continue
				}
				t := timeouts[h.enter.Pid]
				if t == 0 {
					r.add(RuleTimeline, ev.Seq, "no session timeout known for the process of %s", h.id())
				}
				start := ev.Time
				// Only a server kill can leave the term alive: its
				// session moves to another member.
				kept := ev.Type == EvSrvKill && h.end != nil && h.end.Type == EvExit && !h.lost()
				if kept {
					start = h.end.Time
				}
				from[len(r.Takeovers)] = start
				open = append(open, len(r.Takeovers))
				r.Takeovers = append(r.Takeovers, Takeover{Hold: h.id(), Pid: h.enter.Pid, Path: p,
					Fault: ev.String(), FaultEv: ev.Type, FaultSeq: ev.Seq, From: start, Kept: kept,
					Limit: t + takeoverBound(ev.Type)})
			}
		}
		if ev.Type == EvKill {
			drop(func(h *hold) bool { return h.enter.Pid == ev.Target })
		}
	}
	if len(events) == 0 {
		return
	}
	last := events[len(events)-1]
	for _, i := range open {
		if t := r.Takeovers[i]; time.Duration(last.Time-from[i]) > t.Limit {
			r.add(RuleTakeover, last.Seq, "no new term on %s within T + %v = %v of %s",
				t.Path, takeoverBound(t.FaultEv), t.Limit, t.Fault)
		}
	}
}
