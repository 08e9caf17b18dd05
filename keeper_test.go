package recipes

import (
	"context"
	"testing"
	"time"

	"github.com/zkrecipes/recipes/internal/znode"
	"github.com/zkrecipes/recipes/zktest"
)

// TestAdmitUntil: an acquisition begins on a proof only if the probes of a
// busy session can prove the session again before its deadline, with a
// tenth of the timeout to spare (T = 10 s, gap 3 s, times in s).
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
		{"idle, just after an answer", 0, []float64{4}, 4, 8},
		// An acquisition at 5 made the session probe at once: that
		// answer does not hold the next acquisition back, since a probe
		// a gap after b's answer (7.001) proves b, renewing the deadline
		// (9) in time.
		{"idle, an acquisition's probe answered", 0, []float64{4, 5}, 5, 8},
		// At 6.5 the cadence's next probe (7.5) proves b all the same.
		{"idle, an acquisition's probe answered later", 0, []float64{4, 6.5}, 6.5, 8},
		// A probe at 7.0005 came too soon to prove b, and the next
		// (8.0005) renews with less than 1 s to spare.
		{"idle, an acquisition's probe answered too late", 0, []float64{4, 7.0005}, 7.0005, -1},
		// Busy probes every 1 s stopped at L = 10: proof 6, deadline 15.
		{"after a hold, soon", 6, []float64{7, 8, 9, 10}, 10, 14},
		// The reviewer's case: at L + 6 s a probe revived proof L,
		// deadline L + 9; the next proof needs a probe at L + 9.
		{"an old proof revived", 10, []float64{16}, 16, -1},
		// That probe, answered 3 s after, proves 16: deadline 25.
		{"a fresh proof", 16, []float64{19}, 19, 24},
		// No answer since the proof (a connect): two probes a gap apart.
		{"no answer since", 0, nil, 0, 5},
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
	if got, want := k.admitUntil(k.until()), t0.Add(8*time.Second); !got.Equal(want) {
		t.Fatalf("admit until %v, want %v", got.Sub(t0), want.Sub(t0))
	}
}

func TestIdleEvery(t *testing.T) {
	if got := idleEvery(10*time.Second, 3*time.Second); got != 4*time.Second {
		t.Fatalf("idleEvery(10s, gap 3s) = %v, want 4s", got)
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
	const timeout = 4 * time.Second // probes every 1.6 s while idle, 0.4 s while busy; gap 1.2 s
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
	// c + 0.4 T (b), whose answer proves c, to last until c + 0.9 T. An
	// acquisition between b and c + 0.7 T (a gap after b) made the session
	// probe (at once, or a tenth of the timeout after b), and that answer
	// closed the admission (it counted from the newest answer) until a
	// probe a gap after b moved the proof. 0.55 T is in the middle of that.
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
