package zkserver

import "fmt"

// Pause stops member i's JVM with SIGSTOP, as a long GC pause or a
// descheduled VM would: its sockets stay open and nothing answers. Resume
// continues it; Stop, Start and Close work on a paused member. Leader and
// Followers wait for a paused member's answer for up to 30 s (answerBound)
// before leaving it out: ask them before Pause or after Resume.
func (e *Ensemble) Pause(i int) error { return e.signal(i, (*process).pause) }

// Resume continues member i after Pause with SIGCONT.
func (e *Ensemble) Resume(i int) error { return e.signal(i, (*process).resume) }

func (e *Ensemble) signal(i int, send func(*process) error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := e.members[i]
	if m.proc == nil {
		return fmt.Errorf("zkserver: ensemble server %d is not running", m.id)
	}
	return send(m.proc)
}

// PID returns the process id of member i's JVM, or 0 if it is stopped.
func (e *Ensemble) PID(i int) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p := e.members[i].proc; p != nil {
		return p.cmd.Process.Pid
	}
	return 0
}

// Mode returns member i's "srvr" Mode ("leader", "follower", ...), or an
// error if it does not answer or is not serving requests.
func (e *Ensemble) Mode(i int) (string, error) { return ServerMode(e.Addr(i)) }

// Followers returns the members that report Mode follower, skipping
// stopped and isolated members (an isolated member may report its old mode
// for up to syncLimit ticks).
func (e *Ensemble) Followers() []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []int
	for i, m := range e.members {
		if m.proc == nil || e.isolatedLocked(i) {
			continue
		}
		if mode, err := serverMode(m.addr(), answerBound); err == nil && mode == "follower" {
			out = append(out, i)
		}
	}
	return out
}
