package chaos_test

import (
	"bytes"
	"fmt"
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
// the lock), and repairs what it broke.

// bound limits every wait for an effect: several session timeouts, plus an
// election.
func (r *run) bound() time.Duration { return 4*r.sc.timeout + 15*time.Second }

// mutexHolder waits for a live process holding the run's mutex.
func (r *run) mutexHolder() int {
	r.t.Helper()
	var pid int
	r.mustAwait("a holder of the mutex", r.bound(), func(v *view) bool {
		pid = v.holder(chaos.RecipeMutex, r.root+pathMutex)
		return pid != 0
	})
	return pid
}

// awaitOtherEnters waits until a process other than pid enters the mutex at
// or after sequence seq.
func (r *run) awaitOtherEnters(what string, seq, pid int) {
	r.t.Helper()
	r.mustAwait(what, r.bound(), func(v *view) bool {
		_, ok := v.since(seq, chaos.EvEnter, func(ev chaos.Event) bool {
			return ev.Pid != pid && ev.Paths[0] == r.root+pathMutex
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

// killHolder kills -9 the mutex's holder and waits for the next holder.
func killHolder(r *run) {
	pid := r.mutexHolder()
	seq := r.kill(pid, "holder of the mutex")
	r.awaitOtherEnters("the next holder after the kill", seq, pid)
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

// stopHolder stops the mutex's holder with SIGSTOP until another process
// has entered, then resumes it and waits for it to notice its loss.
func stopHolder(r *run) {
	var pid, seq int
	for {
		pid = r.mutexHolder()
		require.NoError(r.t, syscall.Kill(pid, syscall.SIGSTOP))
		r.mustAwait("the holder stopped", r.bound(), func(*view) bool { return stopped(pid) })
		// Stopped, it has written its last line: does it still hold?
		seq = r.fault(chaos.Event{Type: chaos.EvStop, Target: pid, Note: "holder of the mutex"})
		if r.view.hasHold(pid, chaos.RecipeMutex, r.root+pathMutex) {
			break
		}
		// It let go just before the stop: not this one.
		r.fault(chaos.Event{Type: chaos.EvCont, Target: pid, Note: "released before the stop"})
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
	pid := r.mutexHolder()
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

// partition returns a fault that cuts the mutex's holder off with cut until
// another process has entered the mutex and the holder has logged its loss
// (or the wait for it times out: the checker judges), then heals. The
// one-way partition of §1 is a cut that holds only client-to-server bytes;
// the follower isolation of §3 a fault that cuts the holder's server from
// the leader instead of the holder from its server.
func partition(note string, c cut) func(r *run) {
	return func(r *run) {
		pid := r.mutexHolder()
		time.Sleep(r.sc.idle) // the holder idles under the lock
		heal := c(r.proxies[r.proc(pid).slot])
		seq := r.fault(chaos.Event{Type: chaos.EvPartition, Target: pid, Note: note})
		r.awaitOtherEnters("another holder during the "+note, seq, pid)
		r.awaitLoss(seq, pid)
		heal()
		r.fault(chaos.Event{Type: chaos.EvHeal, Target: pid, Note: note})
	}
}

// serverKill returns a fault that kills -9 the ensemble's leader (or a
// follower), waits for a quorum and for the mutex to be entered again, and
// restarts the server.
func serverKill(leader bool) func(r *run) {
	return func(r *run) {
		e := r.ensemble
		i, role := e.Leader(), "leader"
		require.GreaterOrEqual(r.t, i, 0, "no leader")
		if !leader {
			i, role = (i+1)%e.Len(), "follower"
		}
		require.NoError(r.t, e.Stop(i))
		seq := r.fault(chaos.Event{Type: chaos.EvSrvKill, Target: i + 1, Note: role})
		require.NoError(r.t, e.WaitQuorum())
		r.awaitOtherEnters("a holder after the server kill", seq, 0)
		require.NoError(r.t, e.Start(i))
		r.fault(chaos.Event{Type: chaos.EvSrvStart, Target: i + 1, Note: role})
	}
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
