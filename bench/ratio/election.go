package main

import (
	"fmt"
	"io"
	"strings"
)

// printFailover prints BenchmarkFailover's distributions, each side's
// min/p50/p90/max in milliseconds, the median since the leader was last
// heard from and that of its follower's notice (means over the runs), and
// the ratios, ours ÷ Curator's, of the fail-overs' medians and most, and of
// the medians since last heard. The notices are not divided: ours is
// about 0.
func (r *results) printFailover(w io.Writer) {
	if !r.has(failoverName) {
		return
	}
	for _, side := range failoverSides {
		var vs []string
		for _, q := range []string{"min", "p50", "p90", "max"} {
			v, _ := r.mean(failoverName, side+"-"+q+"-ms")
			vs = append(vs, format(v))
		}
		heard, _ := r.mean(failoverName, side+"-heard-p50-ms")
		notice, _ := r.mean(failoverName, side+"-notice-p50-ms")
		fmt.Fprintf(w, "%-60s %s ms; p50 since last heard %s ms, notice %s ms\n",
			"failover "+side+" min/p50/p90/max", strings.Join(vs, " / "), format(heard), format(notice))
	}
	for _, unit := range []string{"p50-ms", "max-ms", "heard-p50-ms"} {
		ours, okA := r.mean(failoverName, failoverSides[0]+"-"+unit)
		theirs, okB := r.mean(failoverName, failoverSides[1]+"-"+unit)
		printRatio(w, "failover latch/Curator "+strings.TrimSuffix(unit, "-ms")+" (ours ÷ theirs)",
			ours/theirs, okA && okB && theirs != 0, "", false)
	}
}
