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

// keepAlive probes the session and ends it with ErrSessionLost when its proof
// of life gets too old. proven is closed at the first proof, if p has none yet.
func (s *Session) keepAlive(p proofs, proven chan<- struct{}) {
	timeout := s.timeout()
	budget := timeout - timeout/10
	every := timeout / 10
	deadline := time.NewTimer(budget)
	defer deadline.Stop()
	rearm := func() { // after p.proof or budget changed
		s.setDeadline(p.proof.Add(budget))
		deadline.Reset(time.Until(p.proof.Add(budget)))
	}
	if p.proof.IsZero() {
		deadline.Stop() // armed at the first proof
	} else {
		rearm()
	}
	next := time.NewTimer(0)
	defer next.Stop()
	results := make(chan probeResult, 1)
	var probes chan probeResult // results while a probe is in flight, else nil
	for {
		select {
		case <-s.done:
			return
		case <-deadline.C:
			s.finish(ErrSessionLost)
			return
		case opened := <-s.regranted:
			// A reconnect may be granted a shorter timeout (a server
			// with a lower maxSessionTimeout): the leader then expires
			// the session that much sooner after its last touch, which
			// may be the reconnect's own, and sooner than the deadline
			// that an earlier proof and the longer timeout gave. The
			// deadline keeps to the shortest timeout granted: for
			// proofs made before the reconnect, whose touches ran on a
			// longer one, that is only earlier than it need be. The
			// reconnect is a proof itself: the leader touched the
			// session (ZooKeeper revalidates a session that a follower
			// takes over with the leader) after its connection was
			// opened.
			if t := s.timeout(); t < timeout && !p.proof.IsZero() {
				timeout, budget, every = t, t-t/10, t/10
				if opened.After(p.proof) {
					p.proof = opened
				}
				rearm()
			}
		case <-next.C:
			if s.State() == StateSuspended {
				// go-zookeeper would only queue it, and send it the
				// moment it reconnects, while it is still reading the
				// session's state to restore its watches (a data race
				// inside go-zookeeper). Wait for the next turn.
				next.Reset(every)
				continue
			}
			probes = results
			s.probe(results)
		case r := <-probes:
			probes = nil
			if p.proof.IsZero() && r.err == nil {
				// The first proof needs a second probe a gap after
				// this one's answer.
				next.Reset(time.Until(r.answered.Add(p.gap)))
			} else {
				next.Reset(time.Until(r.sent.Add(every)))
			}
			if r.err != nil || !s.sameSession() {
				continue
			}
			s.noteAnswered(r.sent)
			before := p.proof
			if p.answered(r.probeTimes) != before {
				rearm()
				if before.IsZero() && proven != nil {
					close(proven)
				}
			}
		}
	}
}

// probe sends one sync and reports on results, which must have room. A
// connection the session owns is closed when the session ends, which answers
// the sync at once, so Close waits for it; on a borrowed connection the sync
// may wait for go-zookeeper to give up on the connection, and nothing waits
// for it.
func (s *Session) probe(results chan<- probeResult) {
	sent := time.Now()
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
