package seqnode

import (
	"slices"
)

// A place is what a waiter keeps from a listing: whether we hold, and if not,
// the node to watch ("" for the directory), any others to watch with it
// (Spec.WaitAll), and whether we hold once they are gone.
type place struct {
	turn      bool
	missing   bool     // our node is not in the listing
	followed  bool     // a node comes after ours in the listing
	watch     string   // name of the node to watch
	also      []string // names of the other nodes to watch, with WaitAll
	all       bool     // WaitAll named them: we hold once all are gone, with no read
	ofOurKind bool     // watch has our lock name: a release of its may be marked
	turnAfter bool     // the predicate says we hold once watch (and also) are gone
}

// MaxWaitAll bounds the nodes a waiter watches at once (Spec.WaitAll), and
// so what it keeps.
const MaxWaitAll = 16

// locate applies the predicate to a listing, for our node at index ours
// (-1: not in it).
func (s Spec) locate(nodes []Node, ours int) place {
	if ours < 0 {
		return place{missing: true}
	}
	followed := ours < len(nodes)-1
	holds, w := s.Predicate(nodes, ours)
	switch {
	case holds:
		return place{turn: true, followed: followed}
	case w == WatchDir:
		return place{followed: followed}
	}
	if p, ok := s.locateAll(nodes, ours); ok {
		p.followed = followed
		return p
	}
	p := place{watch: nodes[w].Name, ofOurKind: nodes[w].Prefix == s.Prefix, followed: followed}
	p.turnAfter = s.turnWithout(nodes, ours, w)
	return p
}

// locateAll is the place Spec.WaitAll gives, if it names nodes and we hold
// once they are gone (which it promises, and which is checked). The waiter
// then watches them all in one round trip and holds once they are gone,
// with no read: WaitAll is only for a layout where no node can come ahead
// of ours once they are gone (an RWMutex's reader waiting for the writers
// ahead, a writer waiting for readers only). It names at most MaxWaitAll
// nodes, or the waiter waits as the predicate says.
func (s Spec) locateAll(nodes []Node, ours int) (place, bool) {
	if s.WaitAll == nil {
		return place{}, false
	}
	all := s.WaitAll(nodes, ours)
	if len(all) == 0 || len(all) > MaxWaitAll || slices.Contains(all, ours) || !s.turnWithout(nodes, ours, all...) {
		return place{}, false
	}
	p := place{watch: nodes[all[0]].Name, all: true, turnAfter: true}
	for _, i := range all[1:] {
		p.also = append(p.also, nodes[i].Name)
	}
	return p, true
}

// turnWithout reports whether the predicate says our node, at index ours
// in nodes, holds once the nodes at the indexes gone are removed.
func (s Spec) turnWithout(nodes []Node, ours int, gone ...int) bool {
	rest := make([]Node, 0, len(nodes))
	at := -1
	for i, n := range nodes {
		switch {
		case i == ours:
			at = len(rest)
		case slices.Contains(gone, i):
			continue
		}
		rest = append(rest, n)
	}
	holds, _ := s.Predicate(rest, at)
	return holds
}
