package main

import (
	"testing"

	"github.com/zkrecipes/recipes/internal/layout"
	"github.com/zkrecipes/recipes/internal/seqnode"
)

// TestParticipantNameAgreesWithTheLayouts: participantName spells out, on
// the public API, the names that the recipes themselves tell apart
// (internal/layout and the lock engine's parser): it must say yes to exactly
// the names they give to a recipe's nodes, other than a semaphore's two
// directories.
func TestParticipantNameAgreesWithTheLayouts(t *testing.T) {
	const uuid = "0b9a4f1e-6c1d-4d5e-9f00-1a2b3c4d5e6f"
	names := map[string]bool{
		"_c_" + uuid + "-lock-0000000003":      true,
		"lock-0000000003":                      true,
		"_c_" + uuid + "-__READ__0000000003":   true,
		"_c_" + uuid + "-__WRIT__-000000001":   true,
		"_c_" + uuid + "-lease-0000000003":     true,
		"_c_" + uuid + "-latch-2147483647":     true,
		uuid:                                   true,
		"ready":                                true,
		"locks":                                false,
		"leases":                               false,
		"lock-":                                false,
		"lock-000000003":                       false, // nine digits
		"lock-+000000003":                      false, // ZooKeeper never prints a plus
		"lock-2147483648":                      false, // past int32
		"lock-0000000003lease-":                false, // the last name has no sequence
		"config":                               false,
		"zookeeper":                            false,
		"0B9A4F1E-6C1D-4D5E-9F00-1A2B3C4D5E6F": false,
		"0b9a4f1e-6c1d-4d5e-9f00_1a2b3c4d5e6f": false,
		"0b9a4f1e-6c1d-4d5e-9f00-1a2b3c4d5e6g": false,
	}
	for name, want := range names {
		got := participantName(name)
		if got != want {
			t.Errorf("participantName(%q) = %v, want %v", name, got, want)
		}
		k := layout.Of(name)
		known := k != layout.None && k != layout.Semaphore ||
			seqnode.Parse(name, layout.LeaseLockName).HasSeq
		if got != known {
			t.Errorf("participantName(%q) = %v, but the layouts say %v", name, got, known)
		}
	}
}
