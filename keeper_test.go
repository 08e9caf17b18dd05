package recipes

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/zkrecipes/recipes/internal/znode"
	"github.com/zkrecipes/recipes/zktest"
)

// TestAdmitUntil: an acquisition begins on a proof only if the probes of a
// busy session can prove the session again before its deadline, with a
// tenth of the timeout to spare, sent up to a hundredth of it (wakeDelay)
// after the acquisition began (T = 10 s, gap 3 s, times in s).
func TestAdmitUntil(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	const rtt = 0.001
	tests := []struct {
		name     string
		proof    float64   // the proof of life
		answered []float64 // send times of the probes answered since, answered a round trip later
		lastSent float64
		admit    float64 // -1: not at all
	}{
		// Idle probes every 4 s: b (at 4) answered proves a (at 0).
		{"idle, just after an answer", 0, []float64{4}, 4, 7.9},
		// An acquisition at 5 made the session probe: that
		// answer does not hold the next acquisition back, since a probe
		// a gap after b's answer (7.001) proves b, renewing the deadline
		// (9) in time.
		{"idle, an acquisition's probe answered", 0, []float64{4, 5}, 5, 7.9},
		// At 6.5 the cadence's next probe (7.5) proves b all the same.
		{"idle, an acquisition's probe answered later", 0, []float64{4, 6.5}, 6.5, 7.9},
		// A probe at 7.0005 came too soon to prove b, and the next
		// (8.0005) renews with less than 1 s to spare.
		{"idle, an acquisition's probe answered too late", 0, []float64{4, 7.0005}, 7.0005, -1},
		// Busy probes every 1 s stopped at L = 10: proof 6, deadline 15.
		{"after a hold, soon", 6, []float64{7, 8, 9, 10}, 10, 13.9},
		// The reviewer's case: at L + 6 s a probe revived proof L,
		// deadline L + 9; the next proof needs a probe at L + 9.
		{"an old proof revived", 10, []float64{16}, 16, -1},
		// That probe, answered 3 s after, proves 16: deadline 25.
		{"a fresh proof", 16, []float64{19}, 19, 23.9},
		// No answer since the proof (a connect): two probes a gap apart.
		{"no answer since", 0, nil, 0, 4.9},
		{"no answer since, late", 0, nil, 6, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := &keeper{timeout: 10 * time.Second, p: proofs{gap: 3 * time.Second, proof: at(tt.proof)}, lastSent: at(tt.lastSent)}
			for _, s := range tt.answered {
				k.p.unused = append(k.p.unused, probeTimes{sent: at(s), answered: at(s + rtt)})
			}
			got := k.admitUntil(k.until())
			want := time.Time{}
			if tt.admit >= 0 {
				want = at(tt.admit)
			}
			if !got.Equal(want) {
				t.Fatalf("admit until %v, want %v", got.Sub(t0), want.Sub(t0))
			}
		})
	}
}

// TestAdmitUntilLongGap: a gap too long for a busy session to renew a
// proof with a tenth to spare admits on what is left (no wait for ever).
func TestAdmitUntilLongGap(t *testing.T) {
	t0 := time.Unix(1000, 0)
	k := &keeper{timeout: 10 * time.Second, p: proofs{gap: 4200 * time.Millisecond, proof: t0}, lastSent: t0}
	if got, want := k.admitUntil(k.until()), t0.Add(7900*time.Millisecond); !got.Equal(want) {
		t.Fatalf("admit until %v, want %v", got.Sub(t0), want.Sub(t0))
	}
}

// TestScheduleIdle: an idle session's next probe goes a 25th of the
// timeout before the admission on its proof closes, so that its answer
// renews the admission before an acquisition has to wait for a proof, also
// when an acquisition's probe put the cadence off; never before it can
// move the proof (T = 10 s, gap 3 s, times in s, answers a round trip
// after their probes).
func TestScheduleIdle(t *testing.T) {
	const rtt = 0.001
	tests := []struct {
		name     string
		proof    float64   // the proof of life
		answered []float64 // send times of the probes answered since, or, negated, of one skipped last; now is just after the last
		due      float64   // when the next probe goes
	}{
		// b (at 3.75) proved a (at 0): admitted until 7.9; the
		// cadence's probe goes at 7.5 (0.4 s before), and its answer
		// admits until 11.65.
		{"on the cadence", 0, []float64{3.75}, 7.5},
		// An acquisition at 5 made the session probe: the cadence
		// would go at 8.75, after the admission closed at 7.9.
		{"after an acquisition's probe", 0, []float64{3.75, 5}, 7.5},
		// At 6.5, too soon to prove b: the cadence would go at 10.25.
		{"after a later acquisition's probe", 0, []float64{3.75, 6.5}, 7.5},
		// The probe due at 7.5 was skipped (the session suspended) or
		// failed: the next goes on the cadence, not at once again.
		{"a probe skipped at the admission's end", 0, []float64{3.75, -7.5}, 11.25},
		// A reconnect at 9.5 proved 6.5, and Y went at 11.25: the
		// admission closes at 14.4, and 14.0 would prove nothing (Y
		// was answered less than a gap before it), so the first probe
		// that does, at 14.251, not the cadence's at 15.
		{"after a reconnect", 6.5, []float64{11.25}, 14.251},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := math.Abs(tt.answered[len(tt.answered)-1]) + 2*rtt
			t0 := time.Now().Add(-time.Duration(now * float64(time.Second)))
			at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
			k := &keeper{
				s: &Session{}, need: &znode.Need{}, timeout: 10 * time.Second,
				p:    proofs{gap: 3 * time.Second, proof: at(tt.proof)},
				next: time.NewTimer(time.Hour),
			}
			defer k.next.Stop()
			for _, s := range tt.answered {
				if s < 0 {
					k.lastSent = at(-s)
					continue
				}
				k.p.unused = append(k.p.unused, probeTimes{sent: at(s), answered: at(s + rtt)})
				k.lastSent = at(s)
			}
			k.schedule(time.Time{})
			if want := at(tt.due); !k.due.Equal(want) {
				t.Fatalf("next probe at %v, want %v", k.due.Sub(t0), want.Sub(t0))
			}
		})
	}
}

// TestWoken: the probe an acquisition begun on an idle session's proof
// makes it send waits wakeDelay, clear of the acquisition's own round trip;
// an acquisition that waits for a proof has it sent at once (T = 10 s, gap
// 3 s, times in s: b at 3.75 proved a at 0, admitted until 7.9).
func TestWoken(t *testing.T) {
	tests := []struct {
		name string
		now  float64
		due  float64 // when the next probe goes
	}{
		{"admitted", 5, 5.1},
		// Not admitted: the probe due at 7.5 goes at once.
		{"waits for a proof", 8, 7.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t0 := time.Now().Add(-time.Duration(tt.now * float64(time.Second)))
			at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
			need := &znode.Need{}
			need.Move(at(9), at(7.9))
			// Admitted at once, or not at all: a waiter is not
			// counted once its context is done, so the cadence is
			// an idle session's then.
			ctx, cancel := context.WithCancel(context.Background())
			if tt.now >= 7.9 {
				cancel()
			}
			defer cancel()
			end, ok := need.Engage(ctx, nil)
			if tt.now < 7.9 != ok {
				t.Fatalf("admitted %v at %v", ok, tt.now)
			}
			if ok {
				defer end()
			}
			k := &keeper{
				s: &Session{}, need: need, timeout: 10 * time.Second,
				p:        proofs{gap: 3 * time.Second, proof: at(0), unused: []probeTimes{{sent: at(3.75), answered: at(3.751)}}},
				lastSent: at(3.75),
				next:     time.NewTimer(time.Hour),
			}
			defer k.next.Stop()
			k.woken()
			// Up to 0.1 s for the time woken read.
			if want := at(tt.due); k.due.Before(want) || k.due.After(want.Add(100*time.Millisecond)) {
				t.Fatalf("next probe at %v, want %v", k.due.Sub(t0), want.Sub(t0))
			}
		})
	}
}

// TestRegrant: a reconnect proves the session as a probe answered when its
// connection was opened would (a gap before that), and a shorter grant
// shortens the timeout and, with no tickTime given, the gap (times in s).
func TestRegrant(t *testing.T) {
	t0 := time.Now()
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	tests := []struct {
		name     string
		tick     time.Duration // given with WithTickTime; 0 for none
		granted  time.Duration
		opened   float64
		timeout  time.Duration
		gap      time.Duration
		proof    float64
		unusedTo int // how many of the probes sent at 1 and 6 remain
	}{
		// A reconnect at 8: proof 5, the probe at 1 proves nothing newer.
		{"a reconnect", 0, 10 * time.Second, 8, 10 * time.Second, 3 * time.Second, 5, 1},
		// At 3 it proves 0, older than the proof.
		{"an early reconnect", 0, 10 * time.Second, 3, 10 * time.Second, 3 * time.Second, 0.5, 2},
		// Granted 4 s: the tickTime is at most 2 s, the gap 1.2 s.
		{"a shorter grant", 0, 4 * time.Second, 8, 4 * time.Second, 1200 * time.Millisecond, 6.8, 0},
		{"a shorter grant, tickTime given", 1500 * time.Millisecond, 4 * time.Second, 8, 4 * time.Second, 900 * time.Millisecond, 7.1, 0},
		{"a longer grant", 0, 20 * time.Second, 8, 10 * time.Second, 3 * time.Second, 5, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Session{}
			s.opts.tick = tt.tick
			gap := 3 * time.Second
			if tt.tick > 0 {
				gap = relayGap(tt.tick)
			}
			k := &keeper{
				s: s, need: &znode.Need{}, timeout: 10 * time.Second,
				p: proofs{gap: gap, proof: at(0.5), unused: []probeTimes{
					{sent: at(1), answered: at(1.001)}, {sent: at(6), answered: at(6.001)},
				}},
				deadline: time.NewTimer(time.Hour),
			}
			defer k.deadline.Stop()
			k.regrant(tt.granted, at(tt.opened))
			if k.timeout != tt.timeout || k.p.gap != tt.gap || !k.p.proof.Equal(at(tt.proof)) || len(k.p.unused) != tt.unusedTo {
				t.Fatalf("timeout %v, gap %v, proof %v, %d probes unused; want %v, %v, %v, %d",
					k.timeout, k.p.gap, k.p.proof.Sub(t0), len(k.p.unused), tt.timeout, tt.gap, at(tt.proof).Sub(t0), tt.unusedTo)
			}
		})
	}
}

func TestIdleEvery(t *testing.T) {
	if got := idleEvery(10*time.Second, 3*time.Second); got != 3750*time.Millisecond {
		t.Fatalf("idleEvery(10s, gap 3s) = %v, want 3.75s", got)
	}
	if got := idleEvery(10*time.Second, 4800*time.Millisecond); got != 5300*time.Millisecond {
		t.Fatalf("idleEvery(10s, gap 4.8s) = %v, want 5.3s", got)
	}
}

// TestAcquisitionsAfterIdlenessBeginAtOnce: on a session whose idle probes
// keep a proof ready, the probe that an acquisition makes it send does not
// keep the acquisitions after it waiting for a proof. The session's
// acquisitions are what Need.Engage admits; one on a context already done
// begins only if it is admitted at once.
func TestAcquisitionsAfterIdlenessBeginAtOnce(t *testing.T) {
	t.Parallel()
	const timeout = 4 * time.Second // probes every 1.5 s while idle, 0.4 s while busy; gap 1.2 s
	s, err := Connect(context.Background(), zktest.Servers(t), WithSessionTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	need := znode.Of(s).Need()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	admitted := func() bool {
		end, ok := need.Engage(done, s.Done())
		if ok {
			end()
		}
		return ok
	}
	// The session probes at the connect (c), and then while idle at
	// c + 3T/8 (b), whose answer proves c, to last until c + 0.9 T. An
	// acquisition between b and c + 0.675 T (a gap after b) made the
	// session probe (soon, or a tenth of the timeout after b), and that
	// answer closed the admission (it counted from the newest answer) until
	// a probe a gap after b moved the proof. 0.55 T is well inside that.
	// Idleness is what this test is about: there is no state to wait for
	// but the time that passes.
	time.Sleep(timeout * 55 / 100)
	start := time.Now()
	end, ok := need.Engage(context.Background(), s.Done())
	if !ok {
		t.Fatal("the first acquisition after idleness did not begin")
	}
	defer end()
	// Its probe's answer. The keep-alive notes the answer before it
	// moves the admission, so the acquisitions after it are tried for a
	// while (T/20, within the admission the fix keeps open).
	for {
		s.mu.Lock()
		answered, probed := s.answered, s.probed
		s.mu.Unlock()
		if !answered.Before(start) {
			break
		}
		select {
		case <-probed:
		case <-time.After(timeout):
			t.Fatal("no probe answered after the acquisition began")
		}
	}
	for i := range 40 {
		if !admitted() {
			t.Fatalf("acquisition %d after the first's probe was answered waits for a proof", i+2)
		}
		time.Sleep(timeout / 20 / 40)
	}
}
