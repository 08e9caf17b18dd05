package chaos_test

import (
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/tests/chaos"
)

// The faults. Each takes one round: it waits for its target to show in the
// timeline, hurts it, waits for the effect to show (another process enters
// the lock), and repairs what it broke. The target is the holder of the
// mutex, or in an election scenario the leader (see run.target).

// bound limits every wait for an effect: several session timeouts, plus an
// election.
func (r *run) bound() time.Duration { return 4*r.sc.timeout + 15*time.Second }

// target is the lock whose holder the faults hurt: the mutex, or in an
// election scenario the leadership (a term is a hold of the latch).
func (r *run) target() (recipe, path string) {
	if r.sc.election {
		return chaos.RecipeLatch, r.root + pathLeader
	}
	return chaos.RecipeMutex, r.root + pathMutex
}

// targetName names the target in the harness's notes.
func (r *run) targetName() string {
	if r.sc.election {
		return "the leader"
	}
	return "holder of the mutex"
}

// holder waits for a live process holding the run's target.
func (r *run) holder() int {
	r.t.Helper()
	var pid int
	recipe, path := r.target()
	r.mustAwait("a "+r.targetName(), r.bound(), func(v *view) bool {
		pid = v.holder(recipe, path)
		return pid != 0
	})
	return pid
}

// heldAt reports whether pid held the target when the harness logged its
// event seq.
func (r *run) heldAt(seq, pid int) bool {
	recipe, path := r.target()
	return r.view.heldAt(seq, pid, recipe, path)
}

// awaitOtherEnters waits until a process other than pid enters the target
// at or after sequence seq.
func (r *run) awaitOtherEnters(what string, seq, pid int) {
	r.t.Helper()
	_, path := r.target()
	r.mustAwait(what, r.bound(), func(v *view) bool {
		_, ok := v.since(seq, chaos.EvEnter, func(ev chaos.Event) bool {
			return ev.Pid != pid && ev.Paths[0] == path
		})
		return ok
	})
}

// awaitLoss waits (without failing: the checker judges) until pid logs a
// loss at or after seq.
func (r *run) awaitLoss(seq, pid int) {
	r.t.Helper()
	r.await(r.bound(), func(v *view) bool {
		_, ok := v.since(seq, chaos.EvLoss, func(ev chaos.Event) bool { return ev.Pid == pid })
		return ok
	})
}

// maxMisses bounds how often in a row a fault may miss its target, the
// holder having let go just before it, before the round fails.
const maxMisses = 20

// missed fails the round if its fault has missed its target too often.
func (r *run) missed(misses int, fault string) {
	r.t.Helper()
	require.Less(r.t, misses, maxMisses, "%s: %d times in a row the holder let go just before it", fault, misses)
}

// intoTerm waits, in an election scenario, a random part of the term's
// hold time, so that a fault meant for the leader lands anywhere in its
// term, guarded writes in flight included, rather than just after it
// entered. The locks' holds are short enough as they are.
func (r *run) intoTerm() {
	if r.sc.election {
		time.Sleep(rand.N(cmp.Or(r.sc.hold, r.cfg.hold))) // a random moment of the term, not a wait for a state
	}
}

// killHolder kills -9 the target's holder and waits for the next holder. A
// holder that let go just before the kill was not the one: it kills the
// next, so that every round kills a holder.
func killHolder(r *run) {
	for misses := 0; ; misses++ {
		r.missed(misses, "kill")
		pid := r.holder()
		r.intoTerm()
		seq := r.kill(pid, r.targetName())
		if r.heldAt(seq, pid) {
			r.awaitOtherEnters("the next holder after the kill", seq, pid)
			return
		}
	}
}

// killWaiter kills -9 a process waiting for the mutex and waits for the
// mutex to change hands after that.
func killWaiter(r *run) {
	var pid int
	r.mustAwait("a waiter for the mutex", r.bound(), func(v *view) bool {
		pid = v.waiter(chaos.RecipeMutex, r.root+pathMutex)
		return pid != 0
	})
	seq := r.kill(pid, "waiter for the mutex")
	r.awaitOtherEnters("a holder after the kill", seq, pid)
}

// stopHolder stops the target's holder with SIGSTOP until another process
// has entered, then resumes it and waits for it to notice its loss.
func stopHolder(r *run) {
	var pid, seq int
	for misses := 0; ; misses++ {
		r.missed(misses, "SIGSTOP")
		pid = r.holder()
		r.intoTerm()
		require.NoError(r.t, syscall.Kill(pid, syscall.SIGSTOP))
		r.mustAwait("the holder stopped", r.bound(), func(*view) bool { return stopped(pid) })
		// Stopped, it has written its last line: does it still hold?
		seq = r.fault(chaos.Event{Type: chaos.EvStop, Target: pid, Note: r.targetName()})
		if r.heldAt(seq, pid) {
			break
		}
		// It let go just before the stop: not this one.
		r.fault(chaos.Event{Type: chaos.EvCont, Target: pid, Note: chaos.NoteMissedStop})
		require.NoError(r.t, syscall.Kill(pid, syscall.SIGCONT))
	}
	r.awaitOtherEnters("another holder while the holder is stopped", seq, pid)
	r.fault(chaos.Event{Type: chaos.EvCont, Target: pid})
	require.NoError(r.t, syscall.Kill(pid, syscall.SIGCONT))
	r.awaitLoss(seq, pid)
}

// stopped reports whether pid is in the stopped state ("T" in /proc).
func stopped(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'T'
}

// cut starts a network fault on a worker's link to its server and returns
// what heals it.
type cut func(p *testenv.Proxy) (heal func())

// blackHole holds every byte between a worker and its server, in both
// directions (§2 of issue 8).
func blackHole(p *testenv.Proxy) func() {
	p.Stall()
	return p.Restore
}

// oneWay holds the bytes from a worker to its server while the server's
// bytes, watch notifications included, still reach it (§1 of issue 8).
func oneWay(p *testenv.Proxy) func() {
	p.StallUp()
	return p.Restore
}

// The ensemble of the isolation scenario: an isolated follower goes on
// answering its clients for syncLimit ticks, longer than the workers'
// session timeout, while the leader runs the sessions' clocks down.
const (
	isolationTick      = 200 * time.Millisecond
	isolationSyncLimit = 25
)

// isolateFollower cuts the mutex holder's server, a follower, off from the
// other servers, while the holder's own connection stays up (§3 of issue
// 8), until another process has entered the mutex and the holder has logged
// its loss; then it heals the follower and waits for it to serve again.
func isolateFollower(r *run) {
	pid := r.holder()
	time.Sleep(r.sc.idle) // the holder idles under the lock
	e := r.ensemble
	f := r.followers[r.proc(pid).slot%len(r.followers)]
	require.NoError(r.t, e.Isolate(f))
	note := fmt.Sprintf("isolation of follower %d", f+1)
	seq := r.fault(chaos.Event{Type: chaos.EvPartition, Target: pid, Note: note})
	r.awaitOtherEnters("another holder during the "+note, seq, pid)
	r.awaitLoss(seq, pid)
	require.NoError(r.t, e.Heal(f))
	r.fault(chaos.Event{Type: chaos.EvHeal, Target: pid, Note: note})
	require.NoError(r.t, e.WaitQuorum())
}

// partition returns a fault that cuts the target's holder off with cut until
// another process has entered the target and the holder has logged its loss
// (or the wait for it times out: the checker judges), then heals. The
// one-way partition of §1 is a cut that holds only client-to-server bytes;
// the follower isolation of §3 a fault that cuts the holder's server from
// the leader instead of the holder from its server. A holder that let go
// just before the cut was not the one: the cut is healed and made again.
func partition(note string, c cut) func(r *run) {
	return func(r *run) {
		for misses := 0; ; misses++ {
			r.missed(misses, note)
			pid := r.holder()
			time.Sleep(r.sc.idle) // the holder idles under the lock
			heal := c(r.proxies[r.proc(pid).slot])
			seq := r.fault(chaos.Event{Type: chaos.EvPartition, Target: pid, Note: note})
			held := r.heldAt(seq, pid)
			if held {
				r.awaitOtherEnters("another holder during the "+note, seq, pid)
				r.awaitLoss(seq, pid)
			}
			heal()
			r.fault(chaos.Event{Type: chaos.EvHeal, Target: pid, Note: note})
			if held {
				return
			}
		}
	}
}

// serverKill returns a fault that kills -9 the ensemble member that pick
// chooses, waits for a quorum and for the target to be entered again (by
// another process than the holder pick names, if any), and restarts the
// server. If pick names a holder that let go just before the kill, the
// round did not hit it and is made again.
func serverKill(pick func(r *run) (member int, role string, holder int)) func(r *run) {
	return func(r *run) {
		e := r.ensemble
		for misses := 0; ; misses++ {
			r.missed(misses, "server kill")
			i, role, pid := pick(r)
			require.NoError(r.t, e.Stop(i))
			seq := r.fault(chaos.Event{Type: chaos.EvSrvKill, Target: i + 1, Note: role})
			require.NoError(r.t, e.WaitQuorum())
			r.awaitOtherEnters("a holder after the server kill", seq, pid)
			require.NoError(r.t, e.Start(i))
			r.fault(chaos.Event{Type: chaos.EvSrvStart, Target: i + 1, Note: role})
			if pid == 0 || r.heldAt(seq, pid) {
				return
			}
		}
	}
}

// ensembleLeader picks the ensemble's leader for serverKill.
func ensembleLeader(r *run) (int, string, int) {
	i := r.ensemble.Leader()
	require.GreaterOrEqual(r.t, i, 0, "no leader")
	return i, "leader", 0
}

// ensembleFollower picks a follower for serverKill.
func ensembleFollower(r *run) (int, string, int) {
	i, _, _ := ensembleLeader(r)
	return (i + 1) % r.ensemble.Len(), "follower", 0
}

// holdersServer picks for serverKill the member that the target's holder's
// session is connected to now.
func holdersServer(r *run) (int, string, int) {
	r.t.Helper()
	var pid, i int
	r.mustAwait("the server of a "+r.targetName(), r.bound(), func(v *view) bool {
		recipe, path := r.target()
		pid = v.holder(recipe, path)
		var ok bool
		i, ok = r.ensemble.MemberOf(v.sessions[pid])
		return pid != 0 && ok
	})
	role := "follower"
	if i == r.ensemble.Leader() {
		role = "leader"
	}
	return i, fmt.Sprintf("%s, the server of %s %d", role, r.targetName(), pid), pid
}

// proc returns the live worker pid.
func (r *run) proc(pid int) *proc {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.procs[pid]
	require.NotNil(r.t, p, "pid %d is not a live worker", pid)
	return p
}

// changeConfig sets every config node every 250 ms until the returned stop
// is called, as the operator of a watched configuration would.
func (r *run) changeConfig() (stop func()) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for n := 0; ; n++ {
			select {
			case <-quit:
				return
			case <-tick.C:
			}
			for _, node := range r.configNodes() {
				_, _ = r.admin.Set(node, fmt.Appendf(nil, "%d", n), -1)
			}
		}
	})
	return func() {
		close(quit)
		wg.Wait()
	}
}
