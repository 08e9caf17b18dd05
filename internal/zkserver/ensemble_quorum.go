package zkserver

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// WaitQuorum waits until every running member that is not isolated serves
// (Mode leader or follower) and exactly one of them is the leader.
func (e *Ensemble) WaitQuorum() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.waitQuorumLocked()
}

// Leader returns the index of the member that currently reports Mode leader,
// or -1 if none does. Isolated members are skipped: an isolated leader goes
// on reporting Mode leader for up to syncLimit ticks.
func (e *Ensemble) Leader() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, m := range e.members {
		if m.proc == nil || e.isolatedLocked(i) {
			continue
		}
		if mode, err := serverMode(m.addr(), answerBound); err == nil && (mode == "leader" || mode == "standalone") {
			return i
		}
	}
	return -1
}

func (e *Ensemble) runningLocked() int {
	n := 0
	for _, m := range e.members {
		if m.proc != nil {
			n++
		}
	}
	return n
}

func (e *Ensemble) waitQuorumLocked() error {
	deadline := time.Now().Add(e.cfg.startTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		status, err := e.pollLocked()
		if err != nil {
			return err
		}
		if status == "" {
			return nil
		}
		if time.Now().After(deadline) {
			var msg strings.Builder
			msg.WriteString(fmt.Sprintf("zkserver: ensemble not serving before deadline: %s", status))
			for _, m := range e.members {
				msg.WriteString(fmt.Sprintf("\n--- server %d log %s:\n%s", m.id, m.logPath, fileTail(m.logPath, 15)))
			}
			return errors.New(msg.String())
		}
		<-tick.C
	}
}

// pollLocked returns "" if the running members form a serving quorum, a
// description of what is missing otherwise, or an error if a member died.
func (e *Ensemble) pollLocked() (string, error) {
	leaders, status := 0, ""
	for i, m := range e.members {
		if m.proc == nil {
			continue
		}
		if !m.proc.alive() {
			return "", fmt.Errorf("zkserver: ensemble server %d exited (%v); log %s:\n%s",
				m.id, m.proc.err, m.logPath, fileTail(m.logPath, 40))
		}
		if e.isolatedLocked(i) {
			continue
		}
		mode, err := ServerMode(m.addr())
		switch {
		case err != nil:
			status += fmt.Sprintf("server %d: %v; ", m.id, err)
		case mode == "leader" || mode == "standalone":
			leaders++
		case mode != "follower":
			status += fmt.Sprintf("server %d: mode %s; ", m.id, mode)
		}
	}
	if status == "" && leaders != 1 {
		status = fmt.Sprintf("%d leaders", leaders)
	}
	return status, nil
}
