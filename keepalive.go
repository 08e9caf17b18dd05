package recipes

import (
	"time"
)

// How a Session knows that ZooKeeper cannot yet have expired it.
//
// The leader expires a session no sooner than the session timeout after it
// last touched the session. A client connected to the leader (or to a
// standalone server) touches it with every packet; a client connected to a
// follower touches the follower, which passes its touches on to the leader in
// its reply to the leader's next ping (the leader pings every tickTime/2). So
// the follower answering, even answering pings, proves nothing: a follower cut
// off from the leader goes on answering for syncLimit ticks while the leader
// runs down the session's clock.
//
// The session therefore sends a probe every timeout/10: a sync, which the
// follower forwards to the leader and answers only when the leader has
// answered it. A leader connection carries packets in order, so when probe b
// is answered, every ping reply the follower sent before forwarding b has
// reached the leader. The follower touched the session for an earlier probe a
// when a arrived, before a was answered; if b was sent at least relayGap
// after a's answer came back, a leader ping reached the follower in between,
// and its reply carried a's touch: the leader touched the session no earlier
// than a was sent. That send time is the session's proof of life; the session
// ends with ErrSessionLost at proof + timeout − timeout/10. Notifications,
// late replies and ping replies never move the proof.

// relayGap is how far apart two probes must have been sent for the second's
// answer to prove that the leader has the first's touch: the leader's ping
// interval, tickTime/2, with a fifth of it again for scheduling jitter.
func relayGap(tick time.Duration) time.Duration { return tick/2 + tick/10 }

// proofs turns answered probes into the session's proof of life.
type proofs struct {
	gap    time.Duration
	proof  time.Time    // the leader has touched the session since then
	unused []probeTimes // answered probes sent after proof, oldest first
}

// probeTimes is when a probe was sent and when its answer came back.
type probeTimes struct{ sent, answered time.Time }

// answered records an answered probe and returns the proof of life, which it
// may have moved forward. Probes must be recorded in the order they were
// sent.
func (p *proofs) answered(probe probeTimes) time.Time {
	if !probe.sent.After(p.proof) {
		// Sent before a reconnect that proved the session later
		// (keeper.regrant): it proves nothing newer, nor can a probe
		// a gap after it.
		return p.proof
	}
	cut := probe.sent.Add(-p.gap)
	i := 0
	for i < len(p.unused) && !p.unused[i].answered.After(cut) {
		i++
	}
	if i > 0 {
		if t := p.unused[i-1].sent; t.After(p.proof) {
			p.proof = t
		}
		p.unused = p.unused[i:]
	}
	p.unused = append(p.unused, probe)
	return p.proof
}

// probeResult is what one probe came back with.
type probeResult struct {
	probeTimes
	err error
}

// keepAlive probes the session and keeps its loss deadline (keeper.go): it
// ends the session with ErrSessionLost when the deadline passes while
// anything is held, waited for or acquired on it, or when its connection
// has been down for the whole timeout. proven is closed at the first
// proof, if p has none yet.
func (s *Session) keepAlive(p proofs, proven chan struct{}) {
	k := newKeeper(s, p, proven)
	defer k.stop()
	gone := time.NewTimer(time.Hour) // armed while suspended: Curator's LOST
	gone.Stop()
	defer gone.Stop()
	changed := s.stateChanged()
	results := make(chan probeResult, 1)
	var probes chan probeResult // results while a probe is in flight, else nil
	for {
		select {
		case <-s.done:
			return
		case <-k.deadline.C:
			if k.need.Lapsed(time.Now()) {
				s.finish(ErrSessionLost)
				return
			}
			// Nothing needed the deadline: the session is unproven,
			// and the next acquisition waits for a proof (Need.Engage).
		case <-changed:
			changed = s.stateChanged()
			gone.Stop()
			if since, ok := s.suspendedSince(); ok {
				gone.Reset(time.Until(since.Add(k.timeout)))
			}
		case <-gone.C:
			if since, ok := s.suspendedSince(); ok && !time.Now().Before(since.Add(k.timeout)) {
				s.finish(ErrSessionLost)
				return
			}
		case <-k.need.Wake():
			// An acquisition began on a session planned idle, or
			// waits for a proof: probe on a busy session's cadence
			// (woken).
			if probes == nil {
				k.woken()
			}
		case <-k.need.Wanted():
			// A call waits for a probe, likely just after a reconnect,
			// while go-zookeeper restores its watches: a reply read
			// then races with that (a data race inside go-zookeeper),
			// so the probe goes no sooner than a tenth of the timeout
			// from now, as it would have while busy.
			if probes == nil {
				k.wanted()
			}
		case opened := <-s.regranted:
			// A reconnect is a proof itself: the leader touched the
			// session (ZooKeeper revalidates a session that a
			// connection takes over, on a follower with the leader)
			// after its connection was opened, so a hold whose
			// reconnect took most of what its deadline left is not
			// lost for want of a probe's answer. It may be granted a
			// shorter timeout (a server with a lower
			// maxSessionTimeout): the leader then expires the session
			// that much sooner after its last touch, which may be the
			// reconnect's own, and sooner than the deadline that an
			// earlier proof and the longer timeout gave. For proofs
			// made before the reconnect, whose touches ran on a
			// longer one, that is only earlier than it need be.
			k.regrant(s.timeout(), opened)
			if probes == nil {
				// A reconnect, perhaps granted a shorter timeout, whose
				// cadence the plan may not have been made on: the next
				// probe is due no later than a tenth of the timeout
				// from now, and no sooner unless it was due sooner
				// already (see Wanted).
				k.wanted()
			}
		case <-k.next.C:
			k.due = time.Time{}
			k.lastSent = time.Now()
			if s.State() == StateSuspended {
				// go-zookeeper would only queue it, and send it the
				// moment it reconnects, while it is still reading the
				// session's state to restore its watches. Wait for the
				// next turn.
				k.schedule(time.Time{})
				continue
			}
			probes = results
			s.probe(k.lastSent, results)
		case r := <-probes:
			probes = nil
			k.answered(r)
		}
	}
}

// probe sends one sync and reports on results, which must have room. A
// connection the session owns is closed when the session ends, which answers
// the sync at once, so Close waits for it; on a borrowed connection the sync
// may wait for go-zookeeper to give up on the connection, and nothing waits
// for it.
func (s *Session) probe(sent time.Time, results chan<- probeResult) {
	run := func() {
		_, err := s.conn.Sync("/")
		results <- probeResult{probeTimes{sent: sent, answered: time.Now()}, err}
	}
	if s.owned {
		s.wg.Go(run)
	} else {
		go run()
	}
}

// noteAnswered records that a probe sent at sent was answered on the session
// (suspectTurn waits for one).
func (s *Session) noteAnswered(sent time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sent.After(s.answered) {
		s.answered = sent
		close(s.probed)
		s.probed = make(chan struct{})
	}
}

// sameSession reports whether the connection is still on the session this
// Session tracks: an answer on a newer one proves nothing about ours.
func (s *Session) sameSession() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn.SessionID() == s.id
}
