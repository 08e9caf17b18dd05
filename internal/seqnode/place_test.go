package seqnode

import (
	"testing"

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
	mutex := Spec{Prefix: "lock-", Holds: FirstN(1)}
	two := Spec{Prefix: "lock-", Holds: FirstN(2)}
	lease := Spec{Prefix: "lease-", Holds: AtMost(2)}
	for _, c := range []struct {
		name  string
		spec  Spec
		nodes []Node
		want  place
	}{
		{"mutex, first", mutex, names("me", "b"), place{holds: true}},
		{"mutex, second: holds once the holder goes", mutex, names("a", "me", "c"), place{watch: "a", holdsAfter: true}},
		{"mutex, third: another is ahead", mutex, names("a", "b", "me"), place{watch: "b"}},
		{"gone from the listing", mutex, names("a", "b"), place{missing: true}},
		{"first two hold", two, names("a", "me"), place{holds: true}},
		{"third of FirstN(2)", two, names("a", "b", "me"), place{watch: "a", holdsAfter: true}},
		{"fourth of FirstN(2)", two, names("a", "b", "c", "me"), place{watch: "b"}},
		{"lease over the maximum watches the directory", lease, names("a", "b", "me"), place{}},
	} {
		assert.Equal(t, c.want, c.spec.place(c.nodes, "me"), c.name)
	}
}
