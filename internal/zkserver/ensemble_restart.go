package zkserver

import (
	"errors"
	"fmt"
	"time"
)

// Stop kills member i with SIGKILL (kill -9: no shutdown hook runs, no
// session is closed) and waits for it to exit. Its data directory, ports
// and peer proxies are kept for Start. It does not wait for the remaining
// members to elect a new leader; use WaitQuorum for that.
func (e *Ensemble) Stop(i int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := e.members[i]
	if m.proc == nil {
		return nil
	}
	err := m.proc.kill()
	m.proc = nil
	return err
}

// Start starts member i again (same ports and data). If a majority of
// members is then running, it waits until all running members serve, and
// until member i has caught up with the leader (see caughtUpLocked).
func (e *Ensemble) Start(i int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return errors.New("zkserver: ensemble is closed")
	}
	if err := e.launchLocked(e.members[i]); err != nil {
		return err
	}
	if e.runningLocked() <= len(e.members)/2 {
		return nil
	}
	if err := e.waitQuorumLocked(); err != nil {
		return err
	}
	return e.caughtUpLocked(i)
}

// Launch starts member i again and returns at once, without waiting for
// it to serve or to catch up: a careless operator's restart, which Start
// guards against.
func (e *Ensemble) Launch(i int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return errors.New("zkserver: ensemble is closed")
	}
	return e.launchLocked(e.members[i])
}

// caughtUpLocked waits until member i has applied every transaction the
// leader had applied once the quorum served. A member serves as soon as it
// has the leader's go-ahead, before it has applied the leader's diff, and
// ZooKeeper 3.8.0 can then leave it inconsistent for good (its digests stop
// matching the leader's, and it keeps ephemeral nodes of expired sessions)
// if the leader dies meanwhile: a test that kills the leader next must
// not do so in that window.
func (e *Ensemble) caughtUpLocked(i int) error {
	leader := -1
	for j, m := range e.members {
		if m.proc == nil || e.isolatedLocked(j) {
			continue
		}
		if mode, err := serverMode(m.addr(), answerBound); err == nil && mode == "leader" {
			leader = j
		}
	}
	if leader < 0 || leader == i {
		return nil
	}
	want, err := lastZxid(e.members[leader].addr())
	if err != nil {
		return fmt.Errorf("zkserver: the leader's zxid: %w", err)
	}
	if want&0xffffffff == 0 {
		// Nothing yet in the leader's epoch, whose zxid no member
		// reaches until something is written: what it had before, its
		// last zxid does not tell.
		return nil
	}
	deadline := time.Now().Add(e.cfg.startTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		got, err := lastZxid(e.members[i].addr())
		if err == nil && got >= want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("zkserver: server %d has not caught up with the leader's zxid %#x before the deadline (%#x, %v)",
				e.members[i].id, want, got, err)
		}
		<-tick.C
	}
}

// Restart stops and starts member i.
func (e *Ensemble) Restart(i int) error {
	if err := e.Stop(i); err != nil {
		return err
	}
	return e.Start(i)
}
