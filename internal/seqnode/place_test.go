package seqnode

import (
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
)

func TestPlace(t *testing.T) {
	names := func(n ...string) []Node {
		var out []Node
		for i, name := range n {
			out = append(out, Node{Name: name, Prefix: "lock-", Seq: int32(i), HasSeq: true})
		}
		return out
	}
	mutex := Spec{Prefix: "lock-", Predicate: FirstN(1)}
	two := Spec{Prefix: "lock-", Predicate: FirstN(2)}
	lease := Spec{Prefix: "lease-", Predicate: AtMost(2)}
	rwWriter := Spec{Prefix: "__WRIT__", Predicate: FirstN(1)}
	kinds := func(n ...string) []Node {
		out := names(n...)
		for i := range out {
			out[i].Prefix = "__WRIT__"
			if out[i].Name != "me" {
				out[i].Prefix = "__READ__"
			}
		}
		return out
	}
	// Waits for everything ahead, all at once, when more than one is.
	all := mutex
	all.WaitAll = func(nodes []Node, ours int) []int {
		if ours < 2 {
			return nil
		}
		var ahead []int
		for i := ours - 1; i >= 0; i-- {
			ahead = append(ahead, i)
		}
		return ahead
	}
	var many []string
	for i := range MaxWaitAll + 1 {
		many = append(many, fmt.Sprint("n", i))
	}
	many = append(many, "me")
	for _, c := range []struct {
		name  string
		spec  Spec
		nodes []Node
		want  place
	}{
		{"mutex, first", mutex, names("me", "b"), place{turn: true, followed: true}},
		{"mutex, second: holds once the holder goes", mutex, names("a", "me", "c"), place{watch: "a", ofOurKind: true, turnAfter: true, followed: true}},
		{"mutex, third: another is ahead", mutex, names("a", "b", "me"), place{watch: "b", ofOurKind: true}},
		{"gone from the listing", mutex, names("a", "b"), place{missing: true}},
		{"first two hold", two, names("a", "me"), place{turn: true}},
		{"third of FirstN(2)", two, names("a", "b", "me"), place{watch: "a", ofOurKind: true, turnAfter: true}},
		{"fourth of FirstN(2)", two, names("a", "b", "c", "me"), place{watch: "b", ofOurKind: true}},
		{"a node of another kind is not marked", rwWriter, kinds("r", "me"), place{watch: "r", turnAfter: true}},
		{"wait for all: every node named", all, names("a", "b", "c", "me"), place{watch: "c", also: []string{"b", "a"}, all: true, turnAfter: true}},
		{"wait for all: too many to watch", all, names(many...), place{watch: many[len(many)-2], ofOurKind: true}},
		{"wait for all: not named, as Holds says", all, names("a", "me"), place{watch: "a", ofOurKind: true, turnAfter: true}},
		{"lease over the maximum watches the directory", lease, names("a", "b", "me"), place{}},
	} {
		assert.Equal(t, c.want, c.spec.locate(c.nodes, Index(c.nodes, "me")), c.name)
	}
}

func TestTokenFromListing(t *testing.T) {
	mutex := Spec{Prefix: "lock-", Predicate: FirstN(1)}
	rw := Spec{Prefix: "__READ__", Siblings: []string{"__READ__", "__WRIT__"}, Predicate: FirstN(1)}
	downgrade := rw
	downgrade.Sequence = "0000000007"
	node := func(name, prefix string, seq int32) Node {
		return Node{Name: name, Prefix: prefix, Seq: seq, HasSeq: true}
	}
	me := node("me", "lock-", 7)
	later := node("later", "lock-", 8)
	earlier := node("earlier", "lock-", 3)
	other := Node{Name: "unrelated"}
	stat := &zk.Stat{Cversion: 15, Pzxid: 99}
	for _, c := range []struct {
		name  string
		spec  Spec
		stat  *zk.Stat
		nodes []Node
		want  int64
	}{
		{"nothing but our create since the start: pzxid is our czxid", mutex, &zk.Stat{Cversion: 8, Pzxid: 42}, []Node{me}, 42},
		{"no node created after ours", mutex, stat, []Node{earlier, me, other}, 99},
		{"a node created after ours is listed", mutex, stat, []Node{earlier, me, later}, 0},
		{"our node is not listed", mutex, stat, []Node{earlier}, 0},
		{"read/write: no node created after ours", rw, stat, []Node{node("w", "__WRIT__", 3), node("me", "__READ__", 7)}, 99},
		{"read/write: a downgrade node made after ours sorts before it", rw, stat, []Node{node("d", "__READ__", 3), node("me", "__READ__", 7)}, 99},
		{"read/write: a writer created after ours is listed", rw, stat, []Node{node("me", "__READ__", 7), node("w", "__WRIT__", 8)}, 0},
		{"read/write: our node is a downgrade node", downgrade, stat, []Node{node("me", "__READ__", 7)}, 0},
	} {
		assert.Equal(t, c.want, tokenFromListing(c.spec, c.stat, c.nodes, Index(c.nodes, "me")), c.name)
	}
}
