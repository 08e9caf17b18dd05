package chaos_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes/tests/chaos"
)

// TestPorcupineFlagsNegativeControls: porcupine, judging the store's keys,
// must flag the soak's two negative controls with real processes: workers
// that skip the lock (and so have no token), and locked workers whose
// store does not check tokens, one of them stopped while it holds, then
// superseded, then let go on (its last write goes out blind).
func TestPorcupineFlagsNegativeControls(t *testing.T) {
	t.Run("no-lock", func(t *testing.T) {
		rep, lin := negativeControl(t, true, func(r *run) {
			r.mustAwait("sections", r.bound(), func(v *view) bool { return v.count >= 200 })
		})
		assert.NotEmpty(t, rep.Broken(chaos.RuleLinearizable), "porcupine accepted sections made without the lock: %+v", lin)
		assert.NotEmpty(t, rep.Broken(chaos.RuleExclusion), "the rules accepted sections made without the lock")
	})
	t.Run("unchecked-store", func(t *testing.T) {
		rep, lin := negativeControl(t, false, func(r *run) {
			var pid, seq int
			for misses := 0; ; misses++ {
				r.missed(misses, "SIGSTOP")
				pid = r.holder()
				require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
				r.mustAwait("the holder stopped", r.bound(), func(*view) bool { return stopped(pid) })
				seq = r.fault(chaos.Event{Type: chaos.EvStop, Target: pid, Note: r.targetName()})
				if r.heldAt(seq, pid) {
					break
				}
				r.fault(chaos.Event{Type: chaos.EvCont, Target: pid, Note: chaos.NoteMissedStop})
				require.NoError(t, syscall.Kill(pid, syscall.SIGCONT))
			}
			r.awaitOtherEnters("another holder while the holder is stopped", seq, pid)
			// Its successor reads the store (fenced) before the stopped
			// holder's last write goes out.
			r.mustAwait("the successor's read", r.bound(), func(*view) bool {
				events, err := chaos.ReadTimeline(r.timeline)
				require.NoError(t, err)
				for _, ev := range events[seq:] {
					if ev.Type == chaos.EvStoreRead && ev.Pid != pid {
						return true
					}
				}
				return false
			})
			r.fault(chaos.Event{Type: chaos.EvCont, Target: pid})
			require.NoError(t, syscall.Kill(pid, syscall.SIGCONT))
			r.awaitLoss(seq, pid)
		})
		assert.NotEmpty(t, rep.Broken(chaos.RuleLinearizable), "porcupine accepted a store that took a superseded holder's write: %+v", lin)
	})
}

// negativeControl runs 3 workers on the run's mutex with a store (checked
// or not), does what control says, and judges the store's keys.
func negativeControl(t *testing.T, noLock bool, control func(r *run)) (*chaos.Report, []chaos.Linearity) {
	store, err := chaos.NewStore(noLock)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, store.Close()) })
	r := newRun(t, config{procs: 3, runtime: 5 * time.Minute}, scenario{name: "control", timeout: 2 * time.Second})
	r.specOf = func(int) chaos.Spec {
		return chaos.Spec{Servers: r.servers, SessionTimeout: r.sc.timeout, Timeline: r.timeline,
			Loops: []chaos.Loop{{Recipe: chaos.RecipeMutex, Path: r.root + pathMutex}, {Recipe: chaos.RecipeMutex, Path: r.root + pathMutex}},
			Hold:  50 * time.Millisecond, Runtime: 5 * time.Minute, Store: store.Addr(), NoLock: noLock, Blind: !noLock}
	}
	for slot := range 3 {
		r.spawn(slot)
	}
	control(r)
	rep := r.finish()
	events, err := chaos.ReadTimeline(r.timeline)
	require.NoError(t, err)
	lin := chaos.Linearize(rep, events, store.Applied(), porcupineBound)
	bad := 0
	for _, l := range lin {
		if l.Result == porcupine.Illegal {
			bad++
		}
	}
	rules := map[string]int{}
	for _, v := range rep.Violations {
		rules[v.Rule]++
	}
	t.Logf("%d store keys, %d of them not linearizable; violations by rule: %s", len(lin), bad, counts(rules))
	return rep, lin
}
