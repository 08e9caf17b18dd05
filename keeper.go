package recipes

import (
	"slices"
	"time"

	"github.com/zkrecipes/recipes/internal/znode"
)

// The keep-alive's cadence and deadline (keepAlive).
//
// While an acquisition, a wait or a hold is under way on the session
// (znode.Need), it probes every tenth of the timeout and the deadline
// passing ends the session. While nothing is, it probes every idleEvery (or
// never: WithoutIdleProbes), and the deadline passing only leaves the
// session unproven. An acquisition begins at once only if the probes it
// makes the session send can prove the session again before the deadline,
// with a tenth of the timeout to spare (admitUntil); else it waits for a
// proof that can.

// idleEvery is how often an idle session probes: 3/8 of the timeout, or a
// twentieth of it more than the gap if that is longer. With the default
// tickTime bound the gap is 0.3 × the timeout, so each idle probe comes
// more than a gap after the one before was answered and each answer proves
// the probe before it: the proof is between 3/8 and 3/4 of the timeout old
// (plus a round trip), and each probe goes a 25th of the timeout before
// the admission on the proof closes (at 0.79: see admitUntil), so
// that its answer renews the admission before an acquisition has to wait
// for one (schedule keeps to that after an acquisition's probe, too).
// That is 2.7 syncs per timeout, beside go-zookeeper's own 3 pings.
func idleEvery(timeout, gap time.Duration) time.Duration {
	return max(timeout*3/8, gap+timeout/20)
}

// A keeper is the keep-alive's state.
type keeper struct {
	s        *Session
	need     *znode.Need
	p        proofs
	proven   chan struct{} // closed at the first proof, then nil; nil if there was one from the start
	timeout  time.Duration
	deadline *time.Timer // fires at the loss deadline
	next     *time.Timer // fires when the next probe is due
	lastSent time.Time   // when the latest probe was sent, or skipped (suspended)
	due      time.Time   // when next fires; zero if it is stopped
}

func newKeeper(s *Session, p proofs, proven chan struct{}) *keeper {
	k := &keeper{
		s:        s,
		need:     znode.Of(s).Need(),
		p:        p,
		proven:   proven,
		timeout:  s.timeout(),
		deadline: time.NewTimer(time.Hour),
		next:     time.NewTimer(0),
		due:      time.Now(), // the first probe goes at once
	}
	k.deadline.Stop() // armed at the first proof
	if !p.proof.IsZero() {
		k.publish()
	}
	return k
}

func (k *keeper) stop() {
	k.deadline.Stop()
	k.next.Stop()
}

// until is the loss deadline: proof + timeout − timeout/10.
func (k *keeper) until() time.Time { return k.p.proof.Add(k.timeout - k.timeout/10) }

// lapsed reports whether the proof is too old (or there is none).
func (k *keeper) lapsed() bool { return !time.Now().Before(k.until()) }

// every is the time from one probe's send to the next's, 0 for none.
func (k *keeper) every() time.Duration {
	switch {
	case k.need.Plan() || k.proven != nil:
		return k.timeout / 10
	case k.s.opts.noIdleProbes:
		return 0
	}
	return idleEvery(k.timeout, k.p.gap)
}

// publish arms the deadline and tells the session's Need, after the proof,
// the probes answered or the timeout changed.
func (k *keeper) publish() {
	if k.p.proof.IsZero() {
		return
	}
	until := k.until()
	k.need.Move(until, k.admitUntil(until))
	k.deadline.Reset(time.Until(until))
}

// admitUntil is until when an acquisition may begin on the proof that
// lasts until until: it makes the session probe every tenth of the timeout
// from the last probe, and the first of those probes sent a gap after the
// oldest answer since the proof (two probes a gap apart, if none was
// answered since the proof) must prove the session again before until,
// with a tenth of the timeout to spare. That probe moves the proof at least
// to the oldest answered probe's send, and schedule sends it no later than
// that allows (unless a Retry's wait or a reconnect put the next probe a
// tenth of the timeout off: wanted). Answers newer than the oldest do not
// hold the acquisition back: the probe an acquisition makes an idle
// session send is one, and counting from it refused the acquisitions after
// the first, on a proof the idle probes keep ready, until a probe moved
// the proof. The admission closes wakeDelay sooner still: that probe waits
// that long after the acquisition began (woken).
//
// A gap so long that even a busy session's probes cannot renew a proof with
// that to spare (a tickTime over about two thirds of the timeout, or a
// reconnect granted a much shorter one) admits on what is left, as long as
// a tenth of the timeout is: the hold then rides out less.
func (k *keeper) admitUntil(until time.Time) time.Time {
	spare := k.timeout / 10
	if 2*k.p.gap+spare >= k.timeout-k.timeout/10 {
		return until.Add(-spare - wakeDelay(k.timeout))
	}
	need := spare
	send := k.lastSent.Add(k.timeout / 10)
	if len(k.p.unused) == 0 {
		need += k.p.gap
	} else if t := k.p.unused[0].answered.Add(k.p.gap); t.After(send) {
		send = t
	}
	if !send.Add(need).Before(until) {
		return time.Time{}
	}
	return until.Add(-need - wakeDelay(k.timeout))
}

// wakeDelay is how long after an acquisition that begins on the proof of an
// idle session the session's first busy probe waits at the least (woken):
// sent at once, it contends with the acquisition's own first round trip
// (the client's and the server's CPU, a standalone server's request
// queue), which took about a tenth longer for it in BenchmarkFirstAcquire.
// admitUntil closes the admission that much sooner, so that the probe still
// goes a tenth of the timeout before the deadline.
func wakeDelay(timeout time.Duration) time.Duration { return timeout / 100 }

// woken takes an acquisition's wake (Need.Wake): the next probe goes on a
// busy session's cadence (schedule), and no sooner than wakeDelay from now
// if the acquisition began on the proof; for one that waits for a proof,
// with no such delay.
func (k *keeper) woken() {
	var floor time.Time
	if now := time.Now(); now.Before(k.admitUntil(k.until())) {
		floor = now.Add(wakeDelay(k.timeout))
	}
	k.schedule(floor)
}

// schedule sets the next probe's timer, no sooner than floor: every from
// the last probe; while busy, and if that probe would come too close to the
// deadline to renew it with a tenth of the timeout to spare, as soon as a
// probe moves the proof (a gap after the oldest answer since it); while
// idle, no later than a 25th of the timeout before the admission
// closes, or as soon after as a probe moves the proof if that is before
// it closes; and,
// while the proof has lapsed, a gap after the last answer (no probe before
// that proves anything new enough, and that one proves it), unless a
// probe went since.
func (k *keeper) schedule(floor time.Time) {
	k.next.Stop()
	k.due = time.Time{}
	e := k.every()
	if e == 0 {
		return
	}
	at := k.lastSent.Add(e)
	if n := len(k.p.unused); n > 0 {
		moves := k.p.unused[0].answered.Add(k.p.gap)
		fresh := k.p.unused[n-1].answered.Add(k.p.gap)
		switch {
		case k.lapsed():
			// Unless a probe went (or was skipped) since then,
			// which proved nothing: then on the cadence.
			if fresh.After(k.lastSent) {
				at = fresh
			}
		case e == k.timeout/10:
			if moves.Before(at) && moves.After(k.lastSent) && !at.Add(e).Before(k.until()) {
				at = moves
			}
		default:
			// Idle: a 25th of the timeout before the admission
			// closes, for the answer to renew it in time, or as soon
			// after as a probe moves the proof if that is still
			// before it closes, when the cadence would send it later
			// (an acquisition's probe or a reconnect put the cadence
			// off). A probe that failed, or was skipped while
			// suspended, at or after that moment leaves the cadence:
			// sent again at once, it would fail again.
			if admit := k.admitUntil(k.until()); !admit.IsZero() {
				t := admit.Add(-k.timeout / 25)
				if moves.After(t) {
					t = moves
				}
				if t.Before(at) && t.Before(admit) && t.After(k.lastSent) {
					at = t
				}
			}
		}
	}
	if floor.After(at) {
		at = floor
	}
	k.due = at
	k.next.Reset(time.Until(at))
}

// wanted takes a call's wait for a probe (Need.Want): the next probe is
// due no later than a tenth of the timeout from now, and no sooner, unless
// it was due sooner already.
func (k *keeper) wanted() {
	floor := time.Now().Add(k.timeout / 10)
	if k.due.IsZero() || k.due.After(floor) {
		k.schedule(floor)
	}
}

// answered takes a probe's result.
func (k *keeper) answered(r probeResult) {
	if r.err == nil && k.s.sameSession() {
		k.s.noteAnswered(r.sent)
		before := k.p.proof
		k.p.answered(r.probeTimes)
		k.publish()
		if before.IsZero() && !k.p.proof.IsZero() && k.proven != nil {
			close(k.proven)
			k.proven = nil
		}
	}
	k.schedule(time.Time{})
}

// regrant takes a reconnect, granted timeout t on a connection opened at
// opened. A grant shorter than the timeout in force shortens it (the
// deadline keeps to the shortest granted) and, if no tickTime was given,
// the gap to what that grant bounds the tickTime to. The reconnect proves
// the session as a probe answered at opened would: the leader touched the
// session after opened (it revalidates a session that a connection takes
// over), but a leader cut off from its quorum does that too until it
// notices, as it answers syncs (docs/semantics.md, "the leader's
// minority"), so the proof is a gap before opened, as old as a probe's
// would be at the least.
func (k *keeper) regrant(t time.Duration, opened time.Time) {
	if k.p.proof.IsZero() {
		return
	}
	if t < k.timeout {
		k.timeout = t
		k.p.gap = min(k.p.gap, relayGap(k.s.opts.tickTime(t)))
	}
	if p := opened.Add(-k.p.gap); p.After(k.p.proof) {
		k.p.proof = p
		// Probes sent before it prove nothing newer.
		k.p.unused = slices.DeleteFunc(k.p.unused, func(pt probeTimes) bool { return !pt.sent.After(p) })
	}
	k.publish()
}
