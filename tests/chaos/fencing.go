package chaos

import (
	"cmp"
	"slices"
	"sort"
	"time"
)

// checkFencing checks every accepted guarded write:
//   - it began before its own hold's end was logged;
//   - on a path with exclusive writers, no hold with a greater token had
//     entered the path before the write began (a superseded holder's write);
//   - on such a path, the accepted writes in the resource's version order
//     carry tokens that never go down;
//   - a hold lost while its process was stopped has no write accepted that
//     began after the SIGCONT and after another hold took its place.
func checkFencing(r *Report, events []Event, holds map[string]*hold) {
	byPath := map[string][]*hold{}
	for _, h := range holds {
		for _, p := range h.enter.Paths {
			byPath[p] = append(byPath[p], h)
		}
	}
	maxTok := map[string][]int64{} // by path: the greatest token among the first i+1 enters
	for p, hs := range byPath {
		slices.SortFunc(hs, func(a, b *hold) int {
			return cmp.Or(cmp.Compare(a.enter.Time, b.enter.Time), cmp.Compare(a.enter.Seq, b.enter.Seq))
		})
		m := make([]int64, len(hs))
		for i, h := range hs {
			m[i] = h.token(p)
			if i > 0 {
				m[i] = max(m[i], m[i-1])
			}
		}
		maxTok[p] = m
	}
	accepted := map[string][]Event{}
	for _, ev := range events {
		h := holds[ev.Hold]
		if ev.Type != EvWrite || h == nil {
			continue
		}
		if !ev.OK {
			r.Rejected++
			h.rejected++
			continue
		}
		r.Accepted++
		if len(ev.Paths) != 1 {
			r.add(RuleTimeline, ev.Seq, "accepted write of %s names %d paths", h.id(), len(ev.Paths))
			continue
		}
		p := ev.Paths[0]
		if h.end != nil && ev.Begin > h.end.Time {
			r.add(RuleFencing, ev.Seq, "a write of %s on %s began after its hold ended at #%d and was accepted",
				h.id(), p, h.end.Seq)
		}
		if h.writers() {
			accepted[p] = append(accepted[p], ev)
			hs := byPath[p]
			n := sort.Search(len(hs), func(i int) bool { return hs[i].enter.Time >= ev.Begin })
			if n > 0 && maxTok[p][n-1] > ev.Token {
				i := n - 1
				for hs[i].token(p) <= ev.Token {
					i-- // maxTok says one of hs[:n] has a greater token
				}
				later := hs[i]
				r.add(RuleFencing, ev.Seq, "write of %s (token %d) on %s accepted although %s (token %d) entered before it began",
					h.id(), ev.Token, p, later.id(), later.token(p))
			}
		}
		if h.taken != nil && h.contAt != nil && ev.Begin > max(h.contAt.Time, h.taken.Time) {
			r.add(RuleFencing, ev.Seq, "%s was stopped at #%d and superseded at #%d, yet a write it began after SIGCONT was accepted",
				h.id(), h.frozenAt.Seq, h.taken.Seq)
		}
	}
	for p, ws := range accepted {
		slices.SortStableFunc(ws, func(a, b Event) int { return cmp.Compare(a.Version, b.Version) })
		for i := 1; i < len(ws); i++ {
			switch {
			case ws[i].Version == ws[i-1].Version:
				r.add(RuleFencing, ws[i].Seq, "two accepted writes on %s claim version %d", p, ws[i].Version)
			case ws[i].Token < ws[i-1].Token:
				r.add(RuleFencing, ws[i].Seq, "accepted token went down on %s: %d (%s) after %d (%s)",
					p, ws[i].Token, ws[i].Hold, ws[i-1].Token, ws[i-1].Hold)
			}
		}
	}
	for _, h := range holds {
		if h.frozenAt != nil {
			r.Frozen = append(r.Frozen, frozen(h))
		}
	}
	slices.SortFunc(r.Frozen, func(a, b Frozen) int { return cmp.Compare(a.Hold, b.Hold) })
}

func frozen(h *hold) Frozen {
	f := Frozen{Hold: h.id(), Pid: h.enter.Pid, Rejected: h.rejected, Superseded: h.taken != nil}
	switch {
	case h.unlockErr != nil:
		f.End = EvLoss + " (from Release)"
	case h.end != nil:
		f.End = h.end.Type
	case h.killedAt != 0:
		f.End = EvKill
	}
	if end := cmp.Or(h.loss(), h.end); end != nil && h.contAt != nil {
		f.AfterCont = time.Duration(end.Time - h.contAt.Time)
	}
	return f
}

// checkLiveness checks that every worker ended on its own or was killed by
// the harness as a fault, and never hung or got stuck; that every hold
// ended (exit, loss, or the kill of its process); and that every torn line
// was left by a process killed after it.
func checkLiveness(r *Report, events []Event, holds map[string]*hold) {
	started := map[int]int{}
	done := map[int]bool{}
	killed := map[int]int{} // by pid: the seq of its kill
	var torn []Event
	for _, ev := range events {
		switch ev.Type {
		case EvStart:
			started[ev.Pid] = ev.Seq
		case EvEnd:
			done[ev.Pid] = true
		case EvKill:
			done[ev.Target] = true
			killed[ev.Target] = ev.Seq
		case EvHung:
			killed[ev.Target] = ev.Seq
			r.add(RuleLiveness, ev.Seq, "worker %d did not exit in time and was killed (%s)", ev.Target, ev.Note)
			done[ev.Target] = true
		case EvStuck:
			r.add(RuleLiveness, ev.Seq, "worker %d gave up on its own loops (%s)", ev.Pid, ev.Note)
		case EvTorn:
			torn = append(torn, ev)
		}
	}
	for _, ev := range torn {
		if k, ok := killed[ev.Pid]; !ok || k < ev.Seq {
			r.add(RuleTimeline, ev.Seq, "a line left unfinished by %d, which was not killed after it: %q", ev.Pid, ev.Note)
		}
	}
	for pid, seq := range started {
		if !done[pid] {
			r.add(RuleLiveness, seq, "worker %d neither ended nor was killed", pid)
		}
	}
	for _, h := range holds {
		if h.end == nil && h.killedAt == 0 && done[h.enter.Pid] {
			r.add(RuleLiveness, h.enter.Seq, "hold %s never ended", h.id())
		}
	}
	slices.SortFunc(r.Violations, func(a, b Violation) int { return cmp.Compare(a.Seq, b.Seq) })
}
