package locks

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/zkrecipes/recipes/internal/seqnode"
)

// decideAll returns, for a listing written as lock names in queue order
// ("R W R": read, write, read), what each node decides under rule: "H" if
// it holds, else "w<i>" for the node it waits for, or "w-" for the
// directory.
func decideAll(listing string, rule seqnode.Rule) string {
	names := map[string]string{"R": readLockName, "W": writeLockName, "M": mutexLockName, "L": leaseLockName}
	var nodes []seqnode.Node
	for i, k := range strings.Fields(listing) {
		nodes = append(nodes, seqnode.Node{Name: fmt.Sprint(i), Prefix: names[k], Seq: int32(i), HasSeq: true})
	}
	var out []string
	for i := range nodes {
		switch holds, waits := seqnode.Decide(nodes, i, rule); {
		case holds:
			out = append(out, "H")
		case waits < 0:
			out = append(out, "w-")
		default:
			out = append(out, fmt.Sprintf("w%d", waits))
		}
	}
	return strings.Join(out, " ")
}

// TestParticipantRules: who holds and whom each waiter waits for, by each
// recipe's own predicate.
func TestParticipantRules(t *testing.T) {
	for _, c := range []struct {
		name, listing string
		rule          seqnode.Rule
		want          string
	}{
		{"mutex", "M M M", firstHolds, "H w0 w1"},
		{"readers share", "R R R", rwRule, "H H H"},
		{"a reader behind a writer waits for it", "R W R", rwRule, "H w0 w1"},
		{"readers wait for the nearest writer ahead", "W R W R R", rwRule, "H w0 w1 w2 w2"},
		{"readers ahead of a writer hold", "R R W R", rwRule, "H H w1 w2"},
		{"a writer waits for the node just ahead", "W W", rwRule, "H w0"},
		{"leases: the first max hold", "L L L", leaseRule(2), "H H w-"},
		{"leases: none recorded, all hold", "L L L", leaseRule(0), "H H H"},
	} {
		assert.Equal(t, c.want, decideAll(c.listing, c.rule), c.name)
	}
}
