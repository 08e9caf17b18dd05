package recipes

import (
	"testing"
	"time"
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
