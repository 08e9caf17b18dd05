package recipes

import (
	"strings"
	"testing"
	"time"
)

func TestRelayGap(t *testing.T) {
	if got := relayGap(2 * time.Second); got != 1200*time.Millisecond {
		t.Fatalf("relayGap(2s) = %v, want 1.2s", got)
	}
}

// TestProofsCreditOnlyProbesARelayGapOld: an answer proves the leader has
// the touch of a probe answered at least the gap before this one was sent,
// and nothing newer.
func TestProofsCreditOnlyProbesARelayGapOld(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	type step struct {
		sent, rtt int // ms after t0 the probe was sent, and how long its answer took
		proof     int // ms after t0 of the proof after it; -1: none yet
	}
	tests := []struct {
		name  string
		start int // initial proof in ms, -1 for none
		steps []step
	}{
		{"first answer proves nothing", -1, []step{{0, 2, -1}}},
		{"answers closer than the gap prove nothing", -1, []step{{0, 2, -1}, {50, 2, -1}, {101, 2, -1}}},
		{"an answer a gap after the first's proves the first", -1, []step{{0, 2, -1}, {102, 2, 0}}},
		{"the newest probe answered a gap before is credited", -1,
			[]step{{0, 2, -1}, {30, 2, -1}, {60, 2, -1}, {170, 2, 60}, {200, 2, 60}, {230, 2, 60}, {272, 2, 170}}},
		{"a connect is a proof from the outset", 0, []step{{10, 2, 0}, {50, 2, 0}, {160, 2, 50}}},
		{"a long silence credits the last probe before it", -1, []step{{0, 2, -1}, {40, 2, -1}, {5000, 2, 40}, {5040, 2, 40}, {5102, 2, 5000}}},
		// A probe held up on its way (a stalled link) touched the server
		// only when it arrived, just before its answer: the gap counts
		// from the answer.
		{"a slow answer counts from its arrival", -1, []step{{0, 500, -1}, {502, 2, -1}, {610, 2, 502}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := proofs{gap: 100 * time.Millisecond}
			if tt.start >= 0 {
				p.proof = at(tt.start)
			}
			for i, s := range tt.steps {
				got := p.answered(probeTimes{sent: at(s.sent), answered: at(s.sent + s.rtt)})
				want := time.Time{}
				if s.proof >= 0 {
					want = at(s.proof)
				}
				if !got.Equal(want) {
					t.Fatalf("step %d (probe at %dms): proof %v, want %v", i, s.sent, got.Sub(t0), want.Sub(t0))
				}
			}
		})
	}
}

// TestProofsDropProbesSentBeforeTheProof: a probe sent before a reconnect
// that moved the proof past it and answered after is not kept as one that a
// later probe could prove.
func TestProofsDropProbesSentBeforeTheProof(t *testing.T) {
	t0 := time.Unix(1000, 0)
	p := proofs{gap: 100 * time.Millisecond, proof: t0.Add(500 * time.Millisecond)}
	if got := p.answered(probeTimes{sent: t0.Add(400 * time.Millisecond), answered: t0.Add(600 * time.Millisecond)}); !got.Equal(p.proof) || len(p.unused) != 0 {
		t.Fatalf("proof %v, %d probes kept; want the proof unchanged and none kept", got.Sub(t0), len(p.unused))
	}
}

func TestParseServers(t *testing.T) {
	good := map[string][]string{
		"127.0.0.1:2181":       {"127.0.0.1:2181"},
		"zk1":                  {"zk1"},
		"a:1, b:2,c:3":         {"a:1", "b:2", "c:3"},
		"[::1]:2181":           {"[::1]:2181"},
		"zk.example.org:65535": {"zk.example.org:65535"},
	}
	for in, want := range good {
		got, chroot, err := parseServers([]string{in})
		if err != nil || len(got) != len(want) || chroot != "" {
			t.Errorf("parseServers(%q) = %v, %v; want %v", in, got, err, want)
			continue
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("parseServers(%q) = %v, want %v", in, got, want)
			}
		}
	}
	for _, in := range [][]string{nil, {""}, {"a:1,"}, {"127.0.0.1:notaport"}, {"h:0"}, {"h:70000"}, {":2181"}, {"h:"}, {"::1"},
		{"h:2181/app/"}, {"h:2181/app//x"}, {"h:2181/zookeeper"}, {"a:1/x", "b:2/y"}, {"/app"}} {
		if got, _, err := parseServers(in); err == nil {
			t.Errorf("parseServers(%q) = %v, want an error", in, got)
		}
	}
	for in, want := range map[string][2]string{
		"h1:2181,h2:2181/app": {"h1:2181 h2:2181", "/app"},
		"h:2181/a/b":          {"h:2181", "/a/b"},
		"h:2181/":             {"h:2181", ""},
	} {
		got, chroot, err := parseServers([]string{in})
		if err != nil || strings.Join(got, " ") != want[0] || chroot != want[1] {
			t.Errorf("parseServers(%q) = %v, %q, %v; want %v", in, got, chroot, err, want)
		}
	}
	if got, chroot, err := parseServers([]string{"a:1/app", "b:2/app"}); err != nil || len(got) != 2 || chroot != "/app" {
		t.Errorf("the same chroot twice: %v, %q, %v", got, chroot, err)
	}
}
