package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
)

// reportReach writes what of every the entries reach, by package, the
// chain apart from the helpers and the root apart from both; then what ran
// but is not reached, each with why it may have run; then the reached
// functions' calls of function values, which the reach does not follow. It
// returns the tallies of the reached chain and of all reached, the root
// excluded, and the reached chain by package.
func reportReach(w io.Writer, g *graph, every, reached, chain, idle map[function]bool) (rch, rall tally, chainPkg map[string][]function) {
	byPkg, chainPkg, helperPkg := map[string][]function{}, map[string][]function{}, map[string][]function{}
	var root, unreached []function
	for f := range every {
		switch {
		case !reached[f]:
			unreached = append(unreached, f)
		case f.pkg == "":
			root = append(root, f)
		case chain[f]: // so it calls another reached: all it calls is
			chainPkg[f.pkg] = append(chainPkg[f.pkg], f)
		default:
			helperPkg[f.pkg] = append(helperPkg[f.pkg], f)
		}
		if reached[f] && f.pkg != "" {
			byPkg[f.pkg] = append(byPkg[f.pkg], f)
		}
	}
	all := func(string) bool { return true }
	rall, rch = count(byPkg, all), count(chainPkg, all)
	fmt.Fprintf(w, "\nreached from Lock and Release by calls, root excluded: %d functions; chain %d, helpers %d\n",
		rall.funcs, rch.funcs, rall.funcs-rch.funcs)
	for _, p := range slices.Sorted(maps.Keys(byPkg)) {
		if len(chainPkg[p]) > 0 {
			fmt.Fprintf(w, "%s, chain (calls another reached): %d\n", p, len(chainPkg[p]))
			list(w, chainPkg[p], idle)
		}
		if len(helperPkg[p]) > 0 {
			fmt.Fprintf(w, "%s, helpers (reached leaves): %d\n", p, len(helperPkg[p]))
			list(w, helperPkg[p], idle)
		}
	}
	fmt.Fprintf(w, "root (Session), reached, not counted: %d\n", len(root))
	list(w, root, idle)

	fmt.Fprintf(w, "\nran but not reached from Lock or Release, not counted in reached (root's included): %d\n", len(unreached))
	listNoted(w, unreached, idle, g.unreached)

	indirect := g.indirectOf(reached)
	fmt.Fprintf(w, "\nindirect calls (not followed): calls of a function value in a reached function: %d\n", len(indirect))
	for _, c := range indirect {
		fmt.Fprintf(w, "    %s\n", c)
	}
	return rch, rall, chainPkg
}
