package chaos

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// RuleLinearizable names the violations that porcupine finds: the history
// of a store key that no order of its operations explains.
const RuleLinearizable = "linearizable"

// The model that porcupine judges each store key's history against: a
// register with the store's fencing check (see Store), and the promise of
// the locks that guard it. Its state is the key's value, its fence and its
// last write's token.
//
//   - A write under a token below the fence, or a read under one below the
//     last write's, must have been refused; any other accepted.
//   - A read returns the value; a fenced one raises the fence to its token.
//   - A write sets the value, the fence and the last write's token. An
//     exclusive holder's write names the value its section last saw (its
//     Basis): under a lock that kept others out, that is still the value.
//     A write that clobbered another holder's (a lost update) breaks this.
//
// A store that checks tokens keeps the first two by itself; the third is
// what the locks promise, and what a worker that skips the lock breaks.
// One that does not check them breaks the first when a superseded holder
// writes late.
var fencedRegister = porcupine.Model{
	Init: func() any { return register{value: InitialValue} },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(register), input.(storeOp), output.(storeResult)
		switch {
		case in.write && in.token < s.fence, !in.write && in.token < s.written:
			return !out.ok, s
		case !out.ok:
			return false, s
		case in.write:
			if in.excl && in.basis != s.value {
				return false, s
			}
			return true, register{fence: in.token, written: in.token, value: in.value}
		case out.value != s.value:
			return false, s
		case in.fence:
			s.fence = max(s.fence, in.token)
		}
		return true, s
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(storeOp), output.(storeResult)
		result := "refused"
		if out.ok {
			result = "ok " + out.value
		}
		if in.write {
			return fmt.Sprintf("%s: write %s on %s, token %d -> %s", in.hold, in.value, in.basis, in.token, result)
		}
		return fmt.Sprintf("%s: read token %d fence %v -> %s", in.hold, in.token, in.fence, result)
	},
	DescribeState: func(state any) string {
		s := state.(register)
		return fmt.Sprintf("%s (fence %d, written under %d)", s.value, s.fence, s.written)
	},
}

type register struct {
	fence, written int64
	value          string
}

type storeOp struct {
	write, fence, excl bool
	token              int64
	value, basis, hold string
}

type storeResult struct {
	ok    bool
	value string
}

// Linearity is porcupine's verdict on one store key.
type Linearity struct {
	Key       string
	Ops       int
	Recovered int                   // operations known only from the store: their worker was killed first
	Result    porcupine.CheckResult // Ok, Illegal, or Unknown (the check timed out)
	info      porcupine.LinearizationInfo
}

// Linearize judges the store operations in events, key by key, with
// porcupine against fencedRegister. applied is what the store itself did
// (Store.Applied): an operation that no worker logged, its worker having
// been killed or its connection broken before the answer came, is taken
// from there, as if sent and answered at the moment the store carried it
// out; one that a worker logged must agree with it. timeout bounds each
// key's check. Disagreements go to r as timeline violations, and
// histories porcupine rejects or cannot judge as RuleLinearizable ones.
func Linearize(r *Report, events []Event, applied map[int]map[int64]Event, timeout time.Duration) []Linearity {
	byKey := map[string][]porcupine.Operation{}
	recovered := map[string]int{}
	clients := map[int]int{} // pid: porcupine's client id
	add := func(ev Event) {
		id, ok := clients[ev.Pid]
		if !ok {
			id = len(clients)
			clients[ev.Pid] = id
		}
		key := ev.Paths[0]
		byKey[key] = append(byKey[key], porcupine.Operation{ClientId: id, Call: ev.Begin, Return: ev.Time,
			Input: storeOp{write: ev.Type == EvStoreWrite, fence: ev.Fence, excl: ev.Excl, token: ev.Token,
				value: ev.Value, basis: ev.Basis, hold: ev.Hold},
			Output: storeResult{ok: ev.OK, value: ev.Value}})
	}
	for _, ev := range events {
		if ev.Type != EvStoreRead && ev.Type != EvStoreWrite {
			continue
		}
		if len(ev.Paths) != 1 || ev.Begin == 0 || ev.Begin > ev.Time {
			r.add(RuleTimeline, ev.Seq, "malformed store event of %s", ev.Hold)
			continue
		}
		if done, ok := applied[ev.Pid][ev.Op]; !ok {
			r.add(RuleTimeline, ev.Seq, "%s's store operation %d is unknown to the store", ev.Hold, ev.Op)
		} else if done.OK != ev.OK || ev.Type == EvStoreRead && ev.OK && done.Value != ev.Value {
			r.add(RuleTimeline, ev.Seq, "%s's store operation %d: the worker logged ok=%v %q, the store did ok=%v %q",
				ev.Hold, ev.Op, ev.OK, ev.Value, done.OK, done.Value)
		}
		delete(applied[ev.Pid], ev.Op)
		add(ev)
	}
	for _, pid := range slices.Sorted(maps.Keys(applied)) {
		for _, op := range slices.Sorted(maps.Keys(applied[pid])) {
			ev := applied[pid][op]
			ev.Hold = fmt.Sprintf("%d.? (op %d, from the store)", pid, op)
			recovered[ev.Paths[0]]++
			add(ev)
		}
	}
	var out []Linearity
	for _, key := range slices.Sorted(maps.Keys(byKey)) {
		ops := byKey[key]
		res, info := porcupine.CheckOperationsVerbose(fencedRegister, ops, timeout)
		l := Linearity{Key: key, Ops: len(ops), Recovered: recovered[key], Result: res, info: info}
		out = append(out, l)
		switch res {
		case porcupine.Illegal:
			r.add(RuleLinearizable, 0, "porcupine: the %d store operations on %s are not linearizable", len(ops), key)
		case porcupine.Unknown:
			r.add(RuleLinearizable, 0, "porcupine: no verdict on the %d store operations on %s within %v", len(ops), key, timeout)
		}
	}
	return out
}

// Visualize writes porcupine's picture of the key's history (an HTML
// page) into dir, named after the key, and returns its path.
func (l Linearity) Visualize(dir string) (string, error) {
	name := strings.NewReplacer("/", "_", ":", "_").Replace(strings.TrimPrefix(l.Key, "/"))
	path := filepath.Join(dir, "porcupine-"+name+".html")
	if err := porcupine.VisualizePath(fencedRegister, l.info, path); err != nil {
		return "", fmt.Errorf("chaos: visualize %s: %w", l.Key, err)
	}
	return path, nil
}

// Exposure is what a run's exclusive holders (every recipe but a reader
// and a lease) did to each other, counted by the fault to blame ("" if
// none): what the locks' promises, and a store's token check, leave to a
// user. A fault counts against an acquisition only from its wait on: one
// that hit an earlier acquisition of the process is no cause.
type Exposure struct {
	Sections int
	// Overlaps counts the enters made while an earlier hold on the path
	// had not yet ended, nor been told of its end (a loss, or its
	// process's kill): two processes believing they hold. By the last
	// fault on the earlier holder's acquisition, or on the entering
	// one's if later: a process stopped while it waited can complete its
	// acquisition late.
	Overlaps map[string]int
	// Stale counts the store writes accepted although a hold that
	// succeeded the writer's on the path (a greater token; the later
	// enter, for holds without one) had already used the store there,
	// and the store had accepted it: a superseded holder's write landing
	// on its successor's data. By the last fault on the writer's
	// acquisition before its successor entered: the fault that let the
	// successor in.
	Stale map[string]int
}

// Expose counts a timeline's Exposure.
func Expose(events []Event) Exposure {
	x := Exposure{Overlaps: map[string]int{}, Stale: map[string]int{}}
	type use struct {
		enter Event // its hold's enter
		at    int64 // when its first accepted store operation returned
	}
	enters := map[string]Event{}
	first := map[string][]use{}  // by key: each hold's first store use, in time order
	used := map[[2]string]bool{} // by hold and key: a multi-lock's hold uses two keys
	live := map[string][]Event{} // by path: the enters of holds not yet ended
	type fault struct {
		kind string
		seq  int
	}
	hit := map[int]fault{}     // by pid: the last fault on it
	waited := map[string]int{} // by hold: its wait's sequence number
	// since is where an acquisition's faults start: its wait, or its
	// enter if it logged none.
	since := func(e Event) int {
		if w, ok := waited[e.Hold]; ok && w < e.Seq {
			return w
		}
		return e.Seq
	}
	end := func(gone func(Event) bool) {
		for p, es := range live {
			live[p] = slices.DeleteFunc(es, gone)
		}
	}
	exclusive := func(e Event) bool { return e.Recipe != RecipeRead && e.Recipe != RecipeLease }
	for _, ev := range events {
		switch ev.Type {
		case EvEnter:
			enters[ev.Hold] = ev
			if !exclusive(ev) {
				continue
			}
			x.Sections++
			for _, p := range ev.Paths {
				if len(live[p]) > 0 {
					f := hit[live[p][0].Pid]
					if f.seq < since(live[p][0]) {
						f = fault{}
					}
					if g := hit[ev.Pid]; g.seq > f.seq && g.seq > since(ev) {
						f = g
					}
					x.Overlaps[f.kind]++
				}
				live[p] = append(live[p], ev)
			}
		case EvWait:
			waited[ev.Hold] = ev.Seq
		case EvExit, EvLoss:
			end(func(e Event) bool { return e.Hold == ev.Hold })
		case EvKill:
			hit[ev.Target] = fault{"kill", ev.Seq}
			end(func(e Event) bool { return e.Pid == ev.Target })
		case EvStop:
			hit[ev.Target] = fault{"sigstop", ev.Seq}
		case EvPartition:
			kind, _, _ := strings.Cut(ev.Note, " ")
			hit[ev.Target] = fault{kind, ev.Seq}
		case EvStoreRead, EvStoreWrite:
			if e, ok := enters[ev.Hold]; ok && ev.OK && !used[[2]string{ev.Hold, ev.Paths[0]}] {
				used[[2]string{ev.Hold, ev.Paths[0]}] = true
				first[ev.Paths[0]] = append(first[ev.Paths[0]], use{enter: e, at: ev.Time})
			}
		}
	}
	for _, us := range first {
		slices.SortFunc(us, func(a, b use) int { return cmp.Compare(a.at, b.at) })
	}
	for _, ev := range events {
		e, ok := enters[ev.Hold]
		if ev.Type != EvStoreWrite || !ev.OK || !ok || !exclusive(e) {
			continue
		}
		for _, u := range first[ev.Paths[0]] {
			if u.at >= ev.Begin {
				break
			}
			if later(u.enter, e, ev.Paths[0]) {
				x.Stale[lastHit(events, ev.Pid, since(e), u.enter.Seq)]++
				break
			}
		}
	}
	return x
}

// later reports whether the hold that entered with b succeeds the one
// that entered with a on path p: by their tokens there when both have one
// (a hold that completed its acquisition late, on resuming from a stop,
// may enter after a successor), else by the order of their enters
// (Curator's holds have no token).
func later(b, a Event, p string) bool {
	tb, ta := tokenOn(b, p), tokenOn(a, p)
	if tb != 0 && ta != 0 {
		return tb > ta
	}
	return b.Seq > a.Seq
}

func tokenOn(e Event, p string) int64 {
	if i := slices.Index(e.Paths, p); i >= 0 && i < len(e.Tokens) {
		return e.Tokens[i]
	}
	return 0
}

// lastHit names the last fault on process pid strictly between the
// events of sequence numbers from and to, in order: "sigstop", "one-way",
// "both-way", or "" if none.
func lastHit(events []Event, pid, from, to int) string {
	kind := ""
	for _, ev := range events {
		if ev.Seq >= to {
			break
		}
		if ev.Seq <= from || ev.Target != pid {
			continue
		}
		switch ev.Type {
		case EvStop:
			kind = "sigstop"
		case EvPartition:
			kind, _, _ = strings.Cut(ev.Note, " ")
		}
	}
	return kind
}
