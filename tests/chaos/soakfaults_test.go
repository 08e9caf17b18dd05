package chaos_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"syscall"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes/tests/chaos"
)

// The soak's faults on worker processes, by kind. Each hits a process
// that holds a lock or waits for one, as the kind says; a process is under
// one fault at a time.
const (
	faultKillHolder = "kill-holder"
	faultKillWaiter = "kill-waiter"
	faultStopHolder = "sigstop-holder"
	faultStopWaiter = "sigstop-waiter"
	faultOneWay     = "one-way"
	faultBothWay    = "both-way"
)

var processFaults = []string{faultKillHolder, faultKillWaiter, faultStopHolder, faultStopWaiter, faultOneWay, faultBothWay}

// soakFaults injects the faults of an epoch at random moments, each kind
// about every gap, from the test's goroutine; a stop or a cut is undone
// after a random time of between a quarter of T and twice T, so that some
// outlive the session and some do not.
type soakFaults struct {
	r     *run
	ph    *phase
	next  map[string]time.Time
	busy  map[int]bool // slots under a fault now
	undo  []undo       // in time order
	count map[string]int
}

type undo struct {
	at   time.Time
	slot int
	do   func()
}

func newSoakFaults(r *run, ph *phase) *soakFaults {
	f := &soakFaults{r: r, ph: ph, next: map[string]time.Time{}, busy: map[int]bool{}, count: map[string]int{}}
	now := time.Now()
	for _, k := range processFaults {
		f.next[k] = now.Add(f.gap())
	}
	return f
}

func (f *soakFaults) gap() time.Duration {
	return time.Duration(rand.ExpFloat64() * float64(f.ph.soak.cfg.gap))
}

// lasting returns how long a stop or a cut lasts: between T/4 and 2T.
func (f *soakFaults) lasting() time.Duration {
	t := f.ph.soak.cfg.timeout
	return t/4 + rand.N(2*t-t/4)
}

// step undoes the faults that are due and injects those whose time has
// come.
func (f *soakFaults) step() {
	now := time.Now()
	for len(f.undo) > 0 && !f.undo[0].at.After(now) {
		u := f.undo[0]
		f.undo = f.undo[1:]
		u.do()
		delete(f.busy, u.slot)
	}
	require.NoError(f.r.t, f.r.view.refresh())
	// In a new order each time: kinds due together compete for the few
	// processes that hold and are not under a fault, and a fixed order
	// would starve the last ones.
	kinds := slices.Clone(processFaults)
	rand.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	for _, kind := range kinds {
		if now.Before(f.next[kind]) {
			continue
		}
		if f.inject(kind) {
			f.count[kind]++
			f.next[kind] = now.Add(f.gap())
		} else {
			f.next[kind] = now.Add(100 * time.Millisecond) // no target now: look again soon
		}
	}
}

// stop undoes every fault still in place.
func (f *soakFaults) stop() {
	for _, u := range f.undo {
		u.do()
	}
	f.undo = nil
	clear(f.busy)
}

// pick returns a live process that is not under a fault and holds a lock
// (holder) or waits for one, and its slot; 0 if there is none.
func (f *soakFaults) pick(holder bool) (pid, slot int) {
	v := f.r.view
	open := v.waits
	if holder {
		open = v.holds
	}
	var pids []int
	for _, ev := range open {
		if !v.dead[ev.Pid] {
			pids = append(pids, ev.Pid)
		}
	}
	rand.Shuffle(len(pids), func(i, j int) { pids[i], pids[j] = pids[j], pids[i] })
	f.r.mu.Lock()
	defer f.r.mu.Unlock()
	for _, pid := range pids {
		if p := f.r.procs[pid]; p != nil && !f.busy[p.slot] {
			return pid, p.slot
		}
	}
	return 0, 0
}

func (f *soakFaults) inject(kind string) bool {
	holder := kind != faultKillWaiter && kind != faultStopWaiter
	pid, slot := f.pick(holder)
	if pid == 0 {
		return false
	}
	role := "waiter"
	if holder {
		role = "holder"
	}
	switch kind {
	case faultKillHolder, faultKillWaiter:
		f.r.kill(pid, role)
	case faultStopHolder, faultStopWaiter:
		require.NoError(f.r.t, syscall.Kill(pid, syscall.SIGSTOP))
		f.r.mustAwait("the worker stopped", f.r.bound(), func(*view) bool { return stopped(pid) })
		f.r.fault(chaos.Event{Type: chaos.EvStop, Target: pid, Note: role})
		f.later(slot, func() {
			f.r.fault(chaos.Event{Type: chaos.EvCont, Target: pid})
			require.NoError(f.r.t, syscall.Kill(pid, syscall.SIGCONT))
		})
	default:
		note := fmt.Sprintf("%s cut of a %s", kind, role)
		for _, p := range f.ph.links[slot] {
			if kind == faultOneWay {
				p.StallUp()
			} else {
				p.Stall()
			}
		}
		f.r.fault(chaos.Event{Type: chaos.EvPartition, Target: pid, Note: note})
		f.later(slot, func() {
			for _, p := range f.ph.links[slot] {
				p.Restore()
			}
			f.r.fault(chaos.Event{Type: chaos.EvHeal, Target: pid, Note: note})
		})
	}
	return true
}

// later marks slot as under a fault and schedules do to undo it.
func (f *soakFaults) later(slot int, do func()) {
	f.busy[slot] = true
	u := undo{at: time.Now().Add(f.lasting()), slot: slot, do: do}
	i, _ := slices.BinarySearchFunc(f.undo, u, func(a, b undo) int { return a.at.Compare(b.at) })
	f.undo = slices.Insert(f.undo, i, u)
}

// counts returns how many faults of each kind were injected.
func (f *soakFaults) counts() map[string]int { return maps.Clone(f.count) }
