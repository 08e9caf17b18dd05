package chaos

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Builders for synthetic timelines; times are in milliseconds.

func ms(n int) int64 { return int64(n) * int64(time.Millisecond) }

func start(t, pid int) Event { return Event{Time: ms(t), Pid: pid, Type: EvStart} }
func end(t, pid int) Event   { return Event{Time: ms(t), Pid: pid, Type: EvEnd} }

func enter(t, pid int, hold, recipe, path string, token int64) Event {
	return Event{Time: ms(t), Pid: pid, Type: EvEnter, Hold: hold, Recipe: recipe,
		Paths: []string{path}, Tokens: []int64{token}}
}

func enterLease(t, pid int, hold, path string, token int64, limit int) Event {
	e := enter(t, pid, hold, RecipeLease, path, token)
	e.Limit = limit
	return e
}

func multi(t, pid int, hold string, paths []string, tokens []int64) Event {
	return Event{Time: ms(t), Pid: pid, Type: EvEnter, Hold: hold, Recipe: RecipeMulti, Paths: paths, Tokens: tokens}
}

func exit(t, pid int, hold string) Event {
	return Event{Time: ms(t), Pid: pid, Type: EvExit, Hold: hold}
}
func loss(t, pid int, hold string) Event {
	return Event{Time: ms(t), Pid: pid, Type: EvLoss, Hold: hold}
}

func write(t, pid int, hold, path string, token int64, ok bool, version int32, begin int) Event {
	return Event{Time: ms(t), Pid: pid, Type: EvWrite, Hold: hold, Paths: []string{path},
		Token: token, OK: ok, Version: version, Begin: ms(begin)}
}

func fault(t int, typ string, target int) Event {
	return Event{Time: ms(t), Pid: 1, Type: typ, Target: target}
}

// missedCont is the SIGCONT that undoes, at once, a SIGSTOP that missed.
func missedCont(t, target int) Event {
	ev := fault(t, EvCont, target)
	ev.Note = NoteMissedStop
	return ev
}

func timeline(events ...Event) []Event {
	for i := range events {
		events[i].Seq = i + 1
	}
	return events
}

// rules lists the rules a report says were broken, in timeline order.
func rules(r *Report) []string {
	var out []string
	for _, v := range r.Violations {
		out = append(out, v.Rule)
	}
	return out
}

func TestCheck(t *testing.T) {
	const m, rw, sem = "/m", "/rw", "/sem"
	tests := []struct {
		name   string
		events []Event
		want   []string // broken rules, in order
	}{{
		name: "mutex hand-off",
		events: timeline(start(0, 10), start(0, 11),
			enter(1, 10, "a", RecipeMutex, m, 5), write(3, 10, "a", m, 5, true, 1, 2), exit(4, 10, "a"),
			enter(5, 11, "b", RecipeMutex, m, 7), write(7, 11, "b", m, 7, true, 2, 6), exit(8, 11, "b"),
			end(9, 10), end(9, 11)),
	}, {
		name: "mutex overlap",
		events: timeline(enter(1, 10, "a", RecipeMutex, m, 5), enter(2, 11, "b", RecipeMutex, m, 7),
			exit(3, 10, "a"), exit(4, 11, "b")),
		want: []string{RuleExclusion},
	}, {
		name: "readers together",
		events: timeline(enter(1, 10, "a", RecipeRead, rw, 5), enter(2, 11, "b", RecipeRead, rw, 7),
			exit(3, 10, "a"), exit(4, 11, "b"), enter(5, 12, "c", RecipeWrite, rw, 9), exit(6, 12, "c")),
	}, {
		name: "writer with a reader",
		events: timeline(enter(1, 10, "a", RecipeRead, rw, 5), enter(2, 11, "b", RecipeWrite, rw, 7),
			exit(3, 10, "a"), exit(4, 11, "b")),
		want: []string{RuleExclusion},
	}, {
		name: "two writers",
		events: timeline(enter(1, 10, "a", RecipeWrite, rw, 5), enter(2, 11, "b", RecipeWrite, rw, 7),
			exit(3, 10, "a"), exit(4, 11, "b")),
		want: []string{RuleExclusion},
	}, {
		name: "semaphore at its limit",
		events: timeline(enterLease(1, 10, "a", sem, 5, 2), enterLease(2, 11, "b", sem, 6, 2), exit(3, 10, "a"),
			enterLease(4, 12, "c", sem, 7, 2), exit(5, 11, "b"), exit(6, 12, "c")),
	}, {
		name: "semaphore over its limit",
		events: timeline(enterLease(1, 10, "a", sem, 5, 2), enterLease(2, 11, "b", sem, 6, 2),
			enterLease(3, 12, "c", sem, 7, 2), exit(4, 10, "a"), exit(5, 11, "b"), exit(6, 12, "c")),
		want: []string{RuleExclusion},
	}, {
		name: "multi-locks on disjoint members",
		events: timeline(multi(1, 10, "a", []string{"/x", "/y"}, []int64{5, 6}), multi(2, 11, "b", []string{"/z"}, []int64{7}),
			exit(3, 10, "a"), exit(4, 11, "b")),
	}, {
		name: "multi-locks sharing a member",
		events: timeline(multi(1, 10, "a", []string{"/x", "/y"}, []int64{5, 6}), multi(2, 11, "b", []string{"/y", "/z"}, []int64{7, 8}),
			exit(3, 10, "a"), exit(4, 11, "b")),
		want: []string{RuleExclusion},
	}, {
		name: "late loss",
		events: timeline(enter(1, 10, "a", RecipeMutex, m, 5), fault(2, EvPartition, 10),
			enter(3000, 11, "b", RecipeMutex, m, 7), loss(3100, 10, "a"), exit(3200, 11, "b")),
		want: []string{RuleLossOrder},
	}, {
		name: "superseded write accepted",
		events: timeline(enter(1, 10, "a", RecipeMutex, m, 5), loss(2, 10, "a"),
			enter(3, 11, "b", RecipeMutex, m, 7), write(5, 10, "a", m, 5, true, 1, 4), exit(6, 11, "b")),
		want: []string{RuleFencing, RuleFencing}, // begun after its loss, and after b entered
	}, {
		name: "superseded write accepted after the later holder entered",
		events: timeline(enter(1, 10, "a", RecipeMutex, m, 5),
			enter(3, 11, "b", RecipeMutex, m, 7), write(5, 10, "a", m, 5, true, 1, 4), exit(6, 11, "b"), exit(7, 10, "a")),
		want: []string{RuleExclusion, RuleFencing},
	}, {
		name: "accepted tokens go down",
		events: timeline(enter(1, 10, "a", RecipeMutex, m, 5), write(2, 10, "a", m, 5, true, 1, 2), exit(3, 10, "a"),
			enter(4, 11, "b", RecipeMutex, m, 7), write(5, 11, "b", m, 7, true, 2, 5), exit(6, 11, "b"),
			write(7, 10, "a", m, 5, true, 3, 2)),
		want: []string{RuleFencing},
	}, {
		name: "a write sent before the loss, accepted after the next enter",
		events: timeline(enter(1, 10, "a", RecipeMutex, m, 5), loss(2, 10, "a"),
			enter(3, 11, "b", RecipeMutex, m, 7), write(5, 10, "a", m, 5, true, 1, 1), exit(6, 11, "b")),
	}, {
		name: "a superseded write refused",
		events: timeline(enter(1, 10, "a", RecipeMutex, m, 5), loss(2, 10, "a"),
			enter(3, 11, "b", RecipeMutex, m, 7), write(5, 10, "a", m, 5, false, 0, 4), exit(6, 11, "b")),
	}, {
		name:   "write after its own exit",
		events: timeline(enter(1, 10, "a", RecipeMutex, m, 5), exit(2, 10, "a"), write(4, 10, "a", m, 5, true, 1, 3)),
		want:   []string{RuleFencing},
	}, {
		name: "killed holder",
		events: timeline(start(0, 10), start(0, 11), enter(1, 10, "a", RecipeMutex, m, 5), fault(2, EvKill, 10),
			enter(3000, 11, "b", RecipeMutex, m, 7), exit(3001, 11, "b"), end(3002, 11)),
	}, {
		name: "stopped holder lost and fenced",
		events: timeline(enter(1, 10, "a", RecipeMutex, m, 5), fault(2, EvStop, 10),
			enter(3000, 11, "b", RecipeMutex, m, 7), write(3001, 11, "b", m, 7, true, 1, 3000), fault(3500, EvCont, 10),
			write(3502, 10, "a", m, 5, false, 0, 3501), loss(3503, 10, "a"), exit(3600, 11, "b")),
	}, {
		name: "stopped lease holder's write accepted after resumption",
		events: timeline(enterLease(1, 10, "a", sem, 5, 1), fault(2, EvStop, 10),
			enterLease(3000, 11, "b", sem, 7, 1), fault(3500, EvCont, 10),
			write(3502, 10, "a", sem, 5, true, 4, 3501), loss(3503, 10, "a"), exit(3600, 11, "b")),
		want: []string{RuleFencing},
	}, {
		name: "stopped while acquiring, entered on resumption, lost",
		events: timeline(enter(1, 11, "b", RecipeMutex, m, 5), Event{Time: ms(2), Pid: 10, Type: EvWait, Hold: "a"},
			fault(3, EvStop, 10), exit(4, 11, "b"), fault(3500, EvCont, 10), enter(3501, 10, "a", RecipeMutex, m, 6),
			enter(3502, 12, "c", RecipeMutex, m, 7), write(3503, 10, "a", m, 6, false, 0, 3501), loss(3504, 10, "a"),
			exit(3505, 12, "c")),
	}, {
		name: "stopped while acquiring, entered on resumption beside the holder, lost",
		events: timeline(Event{Time: ms(2), Pid: 10, Type: EvWait, Hold: "a"}, fault(3, EvStop, 10),
			enter(3000, 12, "c", RecipeMutex, m, 7), fault(3500, EvCont, 10), enter(3501, 10, "a", RecipeMutex, m, 6),
			exit(3503, 10, "a"), loss(3504, 10, "a"), exit(3505, 12, "c")),
	}, {
		name: "a stop that missed its target freezes nothing",
		events: timeline(enter(1, 11, "b", RecipeMutex, m, 5), Event{Time: ms(2), Pid: 10, Type: EvWait, Hold: "a"},
			fault(3, EvStop, 10), missedCont(3, 10), enter(10, 10, "a", RecipeMutex, m, 6),
			exit(11, 11, "b"), loss(12, 10, "a")),
		want: []string{RuleExclusion}, // a entered beside b, and was not frozen
	}, {
		name: "a stop that missed its target, yet lasted",
		events: timeline(enter(1, 11, "b", RecipeMutex, m, 5), fault(2, EvStop, 10), missedCont(900, 10),
			exit(1000, 11, "b")),
		want: []string{RuleTimeline},
	}, {
		name: "short stop of a lease holder",
		events: timeline(enterLease(1, 10, "a", sem, 5, 2), fault(2, EvStop, 10),
			enterLease(10, 11, "b", sem, 7, 2), fault(20, EvCont, 10),
			write(22, 10, "a", sem, 5, true, 4, 21), exit(23, 10, "a"), exit(30, 11, "b")),
	}, {
		name: "stopped holder not lost yet superseded",
		events: timeline(enter(1, 10, "a", RecipeMutex, m, 5), fault(2, EvStop, 10),
			enter(3000, 11, "b", RecipeMutex, m, 7), fault(3500, EvCont, 10), exit(3503, 10, "a"), exit(3600, 11, "b")),
		want: []string{RuleExclusion},
	}, {
		name: "hung, vanished and unfinished workers",
		events: timeline(start(0, 10), start(0, 11), start(0, 12), enter(1, 12, "c", RecipeMutex, m, 5),
			fault(5, EvHung, 10), end(6, 12)),
		want: []string{RuleLiveness, RuleLiveness, RuleLiveness}, // 11 vanished, c never ended, 10 hung
	}, {
		name: "stopped holder told of its loss by Release",
		events: timeline(enter(1, 10, "a", RecipeMutex, m, 5), fault(2, EvStop, 10),
			enter(3000, 11, "b", RecipeMutex, m, 7), fault(3500, EvCont, 10),
			write(4502, 10, "a", m, 5, false, 0, 3501), exit(4503, 10, "a"), loss(4510, 10, "a"), exit(4600, 11, "b")),
	}, {
		name: "holder told of its loss only by Release",
		events: timeline(enter(1, 10, "a", RecipeMutex, m, 5), enter(3000, 11, "b", RecipeMutex, m, 7),
			exit(4503, 10, "a"), loss(4510, 10, "a"), exit(4600, 11, "b")),
		want: []string{RuleLossOrder},
	}, {
		name:   "exit of an unknown hold",
		events: timeline(exit(1, 10, "zz")),
		want:   []string{RuleTimeline},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Check(tt.events)
			assert.Equal(t, tt.want, rules(r), "%v", r.Violations)
		})
	}
}

func TestCheckMargins(t *testing.T) {
	t.Run("after a stop that missed", func(t *testing.T) {
		// The margin names the partition, not the stop that missed since:
		// that one is no fault.
		r := Check(timeline(enter(1, 10, "a", RecipeMutex, "/m", 5), fault(100, EvPartition, 10),
			fault(200, EvStop, 10), missedCont(200, 10),
			loss(3700, 10, "a"), enter(4200, 11, "b", RecipeMutex, "/m", 7), exit(4300, 11, "b")))
		assert.Empty(t, r.Violations)
		assert.Equal(t, 1, r.Faults)
		if assert.Len(t, r.Margins, 1) {
			assert.Contains(t, r.Margins[0].Fault, EvPartition)
			assert.Equal(t, 3600*time.Millisecond, r.Margins[0].Noticed)
		}
	})
	t.Run("partition", func(t *testing.T) {
		r := Check(timeline(enter(1, 10, "a", RecipeMutex, "/m", 5), fault(100, EvPartition, 10),
			loss(3700, 10, "a"), enter(4200, 11, "b", RecipeMutex, "/m", 7), exit(4300, 11, "b")))
		assert.Empty(t, r.Violations)
		if assert.Len(t, r.Margins, 1) {
			mg := r.Margins[0]
			assert.Equal(t, "b", mg.Next)
			assert.Equal(t, 500*time.Millisecond, mg.Margin)
			assert.Equal(t, 3600*time.Millisecond, mg.Noticed)
			assert.Contains(t, mg.Fault, EvPartition)
		}
	})
	t.Run("late", func(t *testing.T) {
		r := Check(timeline(enter(1, 10, "a", RecipeMutex, "/m", 5), fault(100, EvPartition, 10),
			enter(4000, 11, "b", RecipeMutex, "/m", 7), loss(4100, 10, "a"), exit(4300, 11, "b")))
		if assert.Len(t, r.Margins, 1) {
			assert.Equal(t, -100*time.Millisecond, r.Margins[0].Margin)
		}
	})
	t.Run("lease waits for a full semaphore", func(t *testing.T) {
		r := Check(timeline(enterLease(1, 10, "a", "/s", 5, 2), enterLease(2, 11, "b", "/s", 6, 2), loss(10, 10, "a"),
			enterLease(20, 12, "c", "/s", 7, 2), enterLease(30, 13, "d", "/s", 8, 2)))
		if assert.Len(t, r.Margins, 1) {
			assert.Equal(t, "c", r.Margins[0].Next)
			assert.Equal(t, 10*time.Millisecond, r.Margins[0].Margin)
		}
	})
	t.Run("reader's next is a writer", func(t *testing.T) {
		r := Check(timeline(enter(1, 10, "a", RecipeRead, "/rw", 5), loss(10, 10, "a"),
			enter(20, 11, "b", RecipeRead, "/rw", 6), exit(25, 11, "b"), enter(40, 12, "c", RecipeWrite, "/rw", 7)))
		if assert.Len(t, r.Margins, 1) {
			assert.Equal(t, "c", r.Margins[0].Next)
			assert.Equal(t, 30*time.Millisecond, r.Margins[0].Margin)
		}
	})
	t.Run("stopped holder", func(t *testing.T) {
		r := Check(timeline(enter(1, 10, "a", RecipeMutex, "/m", 5), fault(2, EvStop, 10),
			enter(3000, 11, "b", RecipeMutex, "/m", 7), fault(3500, EvCont, 10),
			write(3502, 10, "a", "/m", 5, false, 0, 3501), loss(3510, 10, "a"), exit(3600, 11, "b")))
		assert.Empty(t, r.Violations)
		assert.Empty(t, r.Margins, "a stopped holder is not measured")
		assert.Equal(t, []Frozen{{Hold: "a", Pid: 10, Superseded: true, End: EvLoss, AfterCont: 10 * time.Millisecond, Rejected: 1}}, r.Frozen)
	})
}

func session(t, pid int, timeout time.Duration) Event {
	return Event{Time: ms(t), Pid: pid, Type: EvSession, Note: "0x1", Timeout: timeout}
}

func TestCheckTakeover(t *testing.T) {
	const p, T = "/leader", 2 * time.Second
	limit := int((T + TakeoverBound) / time.Millisecond)
	serverLimit := int((T + ServerTakeoverBound) / time.Millisecond)
	sessions := []Event{start(0, 10), start(0, 11), start(0, 12), session(1, 10, T), session(1, 11, T), session(1, 12, T)}
	tests := []struct {
		name   string
		events []Event
		want   []string   // broken rules, in order
		takes  []Takeover // what was measured; Fault is left out, Limit is T + the fault's bound unless set
	}{{
		name: "leader killed, the next takes over after T",
		events: timeline(append(slices.Clone(sessions), enter(10, 10, "a", RecipeLatch, p, 5), fault(100, EvKill, 10),
			enter(2250, 11, "b", RecipeLatch, p, 7), exit(3000, 11, "b"), end(3001, 11), end(3002, 12))...),
		takes: []Takeover{{Hold: "a", Pid: 10, Path: p, FaultEv: EvKill, Next: "b", After: 2150 * time.Millisecond}},
	}, {
		name: "negative control: the next leader comes too late",
		events: timeline(append(slices.Clone(sessions), enter(10, 10, "a", RecipeLatch, p, 5), fault(100, EvKill, 10),
			enter(100+limit+1, 11, "b", RecipeLatch, p, 7), exit(6000, 11, "b"), end(6001, 11), end(6002, 12))...),
		want:  []string{RuleTakeover},
		takes: []Takeover{{Hold: "a", Pid: 10, Path: p, FaultEv: EvKill, Next: "b", After: time.Duration(limit+1) * time.Millisecond}},
	}, {
		name: "negative control: no new leader at all",
		events: timeline(append(slices.Clone(sessions), enter(10, 10, "a", RecipeLatch, p, 5), fault(100, EvPartition, 10),
			loss(1800, 10, "a"), end(100+limit+1, 11), end(100+limit+2, 12), end(100+limit+3, 10))...),
		want:  []string{RuleTakeover},
		takes: []Takeover{{Hold: "a", Pid: 10, Path: p, FaultEv: EvPartition}},
	}, {
		name: "the run ends before the limit: not judged",
		events: timeline(append(slices.Clone(sessions), enter(10, 10, "a", RecipeLatch, p, 5), fault(100, EvPartition, 10),
			loss(1800, 10, "a"), end(1900, 11), end(1901, 12), end(1902, 10))...),
		takes: []Takeover{{Hold: "a", Pid: 10, Path: p, FaultEv: EvPartition}},
	}, {
		name: "the leader kept its term through a server kill and resigned",
		events: timeline(append(slices.Clone(sessions), enter(10, 10, "a", RecipeLatch, p, 5), fault(100, EvSrvKill, 2),
			exit(900, 10, "a"), enter(920, 11, "b", RecipeLatch, p, 7), exit(1500, 11, "b"),
			end(1600, 10), end(1601, 11), end(1602, 12))...),
		takes: []Takeover{{Hold: "a", Pid: 10, Path: p, FaultEv: EvSrvKill, Kept: true, Next: "b", After: 20 * time.Millisecond}},
	}, {
		name: "negative control: a kept term's hand-off comes too late",
		events: timeline(append(slices.Clone(sessions), enter(10, 10, "a", RecipeLatch, p, 5), fault(100, EvSrvKill, 2),
			exit(900, 10, "a"), enter(900+serverLimit+1, 11, "b", RecipeLatch, p, 7), exit(9000, 11, "b"),
			end(9100, 10), end(9101, 11), end(9102, 12))...),
		want: []string{RuleTakeover},
		takes: []Takeover{{Hold: "a", Pid: 10, Path: p, FaultEv: EvSrvKill, Kept: true, Next: "b",
			After: time.Duration(serverLimit+1) * time.Millisecond}},
	}, {
		name: "a term lost to a server kill has the server kill's bound",
		events: timeline(append(slices.Clone(sessions), enter(10, 10, "a", RecipeLatch, p, 5), fault(100, EvSrvKill, 2),
			loss(3000, 10, "a"), enter(100+limit+1, 11, "b", RecipeLatch, p, 7), exit(9000, 11, "b"),
			end(9100, 10), end(9101, 11), end(9102, 12))...),
		takes: []Takeover{{Hold: "a", Pid: 10, Path: p, FaultEv: EvSrvKill, Next: "b",
			After: time.Duration(limit+1) * time.Millisecond}},
	}, {
		name: "negative control: two terms at once are an exclusion violation",
		events: timeline(append(slices.Clone(sessions), enter(10, 10, "a", RecipeLatch, p, 5),
			enter(20, 11, "b", RecipeLatch, p, 7), exit(30, 10, "a"), exit(40, 11, "b"),
			end(50, 10), end(51, 11), end(52, 12))...),
		want: []string{RuleExclusion},
	}, {
		name: "a term lost after a server kill is measured from the kill",
		events: timeline(append(slices.Clone(sessions), enter(10, 10, "a", RecipeLatch, p, 5), fault(100, EvSrvKill, 2),
			loss(3000, 10, "a"), enter(3900, 12, "c", RecipeLatch, p, 7), exit(4500, 12, "c"),
			end(4600, 10), end(4601, 11), end(4602, 12))...),
		takes: []Takeover{{Hold: "a", Pid: 10, Path: p, FaultEv: EvSrvKill, Next: "c", After: 3800 * time.Millisecond}},
	}, {
		name: "the old leader's process leads again in a new session: a new leader all the same",
		events: timeline(append(slices.Clone(sessions), enter(10, 10, "a", RecipeLatch, p, 5), fault(100, EvSrvKill, 2),
			loss(900, 10, "a"), session(1000, 10, T), enter(2500, 10, "c", RecipeLatch, p, 9), exit(3500, 10, "c"),
			end(4600, 10), end(4601, 11), end(4602, 12))...),
		takes: []Takeover{{Hold: "a", Pid: 10, Path: p, FaultEv: EvSrvKill, Next: "c", After: 2400 * time.Millisecond}},
	}, {
		name: "stopped leader: the next enters during the stop",
		events: timeline(append(slices.Clone(sessions), enter(10, 10, "a", RecipeLatch, p, 5), fault(100, EvStop, 10),
			enter(2300, 11, "b", RecipeLatch, p, 7), fault(2400, EvCont, 10), loss(2401, 10, "a"), exit(3000, 11, "b"),
			enter(3010, 10, "c", RecipeLatch, p, 8), exit(3500, 10, "c"),
			end(4600, 10), end(4601, 11), end(4602, 12))...),
		takes: []Takeover{{Hold: "a", Pid: 10, Path: p, FaultEv: EvStop, Next: "b", After: 2200 * time.Millisecond}},
	}, {
		name: "a fault on a process that does not lead measures nothing",
		events: timeline(append(slices.Clone(sessions), enter(10, 10, "a", RecipeLatch, p, 5), fault(100, EvKill, 12),
			exit(900, 10, "a"), enter(9000, 11, "b", RecipeLatch, p, 7), exit(9500, 11, "b"), end(9600, 10), end(9601, 11))...),
	}, {
		name: "a leader that resigned before the fault is not measured",
		events: timeline(append(slices.Clone(sessions), enter(10, 10, "a", RecipeLatch, p, 5), exit(90, 10, "a"),
			fault(100, EvKill, 10), enter(9000, 11, "b", RecipeLatch, p, 7), exit(9500, 11, "b"), end(9600, 11), end(9601, 12))...),
	}, {
		name: "mutex holds are not terms",
		events: timeline(append(slices.Clone(sessions), enter(10, 10, "a", RecipeMutex, p, 5), fault(100, EvKill, 10),
			enter(9000, 11, "b", RecipeMutex, p, 7), exit(9500, 11, "b"), end(9600, 11), end(9601, 12))...),
	}, {
		name: "no session timeout in the timeline",
		events: timeline(start(0, 10), start(0, 11), enter(10, 10, "a", RecipeLatch, p, 5), fault(100, EvKill, 10),
			enter(1000, 11, "b", RecipeLatch, p, 7), exit(1500, 11, "b"), end(1600, 11)),
		want: []string{RuleTimeline},
		takes: []Takeover{{Hold: "a", Pid: 10, Path: p, FaultEv: EvKill, Next: "b", After: 900 * time.Millisecond,
			Limit: TakeoverBound}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Check(tt.events)
			assert.Equal(t, tt.want, rules(r), "%v", r.Violations)
			for i := range r.Takeovers {
				to := &r.Takeovers[i]
				assert.NotEmpty(t, to.Fault)
				assert.Equal(t, "#"+fmt.Sprint(to.FaultSeq), strings.Fields(to.Fault)[0], "the fault's sequence")
				assert.Positive(t, to.From, "the clock's start")
				to.Fault, to.FaultSeq, to.From = "", 0, 0
			}
			for i := range tt.takes {
				tt.takes[i].Limit = cmp.Or(tt.takes[i].Limit, T+takeoverBound(tt.takes[i].FaultEv))
			}
			assert.Equal(t, tt.takes, r.Takeovers)
		})
	}
}
