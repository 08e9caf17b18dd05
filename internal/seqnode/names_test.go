package seqnode

import (
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seqName prints a sequence the way ZooKeeper does (Java's "%010d").
func seqName(prefix string, seq int32) string {
	return fmt.Sprintf("_c_%s-%s%010d", NewUUID(), prefix, seq)
}

func TestNewUUIDIsJavaShaped(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 100 {
		u := NewUUID()
		require.Regexp(t, re, u)
		require.False(t, seen[u], "duplicate uuid %s", u)
		seen[u] = true
	}
}

func TestProtectedNameRoundTrip(t *testing.T) {
	u := NewUUID()
	name := ProtectedName(u, "lock-") + "0000000007"
	assert.Len(t, ProtectedName(u, ""), 40, "Curator's protected head is 40 characters")
	assert.Equal(t, u, UUID(name))
	n := Parse(name, "lock-")
	assert.Equal(t, Node{Name: name, Prefix: "lock-", Seq: 7, HasSeq: true}, n)
	for _, bad := range []string{"lock-0000000001", "_c_short-lock-0000000001", ProtectedName(u, "")} {
		assert.Empty(t, UUID(bad), bad)
	}
}

func TestParse(t *testing.T) {
	cases := []struct {
		name   string
		seq    int32
		hasSeq bool
	}{
		{"lock-0000000000", 0, true},
		{"_c_x-lock-2147483647", math.MaxInt32, true},
		{"_c_x-lock--2147483648", math.MinInt32, true},
		{"_c_x-lock--000000001", -1, true},
		{"lock-lock-0000000003", 3, true}, // the last occurrence counts, as in Curator
		{"foreign", 0, false},
		{"lock-", 0, false},
		{"lock-12", 0, false},
		{"lock-00000000x1", 0, false},
		{"lock-+000000001", 0, false},
		{"lock-99999999999", 0, false},
	}
	for _, c := range cases {
		n := Parse(c.name, "lock-")
		assert.Equal(t, c.hasSeq, n.HasSeq, c.name)
		assert.Equal(t, c.seq, n.Seq, c.name)
	}
	rw := Parse("_c_u-__READ__0000000009", "__READ__", "__WRIT__")
	assert.Equal(t, "__READ__", rw.Prefix)
	assert.Equal(t, int32(9), rw.Seq)
}

func names(nodes []Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	return out
}

func TestSortAcrossTheWrap(t *testing.T) {
	// In creation order: the counter runs up to MaxInt32 and wraps.
	created := []int32{math.MaxInt32 - 2, math.MaxInt32 - 1, math.MaxInt32, math.MinInt32, math.MinInt32 + 1}
	var want []string
	for _, s := range created {
		want = append(want, seqName("lock-", s))
	}
	for range 20 {
		shuffled := slices.Clone(want)
		rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		assert.Equal(t, want, names(ParseAll(shuffled, "lock-")))
	}
}

func TestSortMatchesCuratorAwayFromTheWrap(t *testing.T) {
	// Curator orders by the digits as strings; so must we, for any live set
	// that does not straddle the wrap.
	in := []string{seqName("lock-", 10), "zz-foreign", seqName("lock-", 2), seqName("lock-", 1000000), seqName("lock-", 0)}
	got := names(ParseAll(in, "lock-"))
	assert.Equal(t, []string{in[4], in[2], in[0], in[3], in[1]}, got)
}

func TestSortBreaksTiesByName(t *testing.T) {
	a, b := "_c_a-__WRIT__0000000005", "_c_b-__READ__0000000005"
	assert.Equal(t, []string{a, b}, names(ParseAll([]string{b, a}, "__READ__", "__WRIT__")))
}

// FuzzSort checks, for any window of live sequences narrower than 2^31 (wrapped
// or not), that the order is the creation order and does not depend on the
// order ZooKeeper lists the children in.
func FuzzSort(f *testing.F) {
	f.Add(int32(math.MaxInt32-3), uint16(7), uint64(1))
	f.Add(int32(0), uint16(3), uint64(2))
	f.Add(int32(math.MinInt32), uint16(40), uint64(3))
	f.Fuzz(func(t *testing.T, start int32, count uint16, seed uint64) {
		n := int(count%64) + 1
		rng := rand.New(rand.NewPCG(seed, seed>>1))
		var want []string
		seq := start
		for range n {
			want = append(want, seqName("lock-", seq))
			seq += int32(rng.IntN(1000) + 1) // wraps like the server's counter
		}
		got := slices.Clone(want)
		rng.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
		if diff := names(ParseAll(got, "lock-")); !slices.Equal(diff, want) {
			t.Fatalf("order %v, want %v", diff, want)
		}
	})
}

// FuzzParse checks the parser never panics and only accepts what ZooKeeper
// prints for an int32.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"lock-0000000001", "_c_x-lock--2147483648", "lock-", "", "lock-lock-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		n := Parse(name, "lock-")
		if n.HasSeq && Parse(fmt.Sprintf("lock-%010d", n.Seq), "lock-").Seq != n.Seq {
			t.Fatalf("%q parsed to %d, which does not print back", name, n.Seq)
		}
	})
}

func TestFirstN(t *testing.T) {
	nodes := make([]Node, 5)
	holds, _ := FirstN(1)(nodes, 0)
	assert.True(t, holds)
	holds, w := FirstN(1)(nodes, 3)
	assert.False(t, holds)
	assert.Equal(t, 2, w, "a mutex waiter watches its immediate predecessor")
	holds, w = FirstN(2)(nodes, 4)
	assert.False(t, holds)
	assert.Equal(t, 2, w)
}
