package locks

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/zkrecipes/recipes"
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

// TestWithGate: who the acquirers at a semaphore's gate are listed as, and
// whom they wait for, whether or not the gate's holder has created its lease
// yet, also when its session holds other leases.
func TestWithGate(t *testing.T) {
	lease := func(path string, session, token int64, holds bool) Participant {
		return Participant{Path: path, Kind: recipes.KindLease, Session: session, Token: token, Holds: holds}
	}
	gateNode := func(path string, session, token int64, holds bool, waits string) Participant {
		return Participant{Path: path, Kind: recipes.KindMutex, Session: session, Token: token, Holds: holds, Waits: waits}
	}
	type row struct {
		path, waits string
		holds       bool
	}
	rows := func(ps []Participant) []row {
		var out []row
		for _, p := range ps {
			assert.Equal(t, recipes.KindLease, p.Kind, p.Path)
			out = append(out, row{p.Path, p.Waits, p.Holds})
		}
		return out
	}
	for _, c := range []struct {
		name         string
		leases, gate []Participant
		want         []row
	}{{
		name:   "nobody at the gate",
		leases: []Participant{lease("/l/1", 1, 10, true)},
		want:   []row{{"/l/1", "", true}},
	}, {
		name:   "the gate's holder waits for a lease: the next waits for that lease",
		leases: []Participant{lease("/l/1", 1, 10, true), lease("/l/2", 2, 21, false)},
		gate:   []Participant{gateNode("/g/2", 2, 20, true, ""), gateNode("/g/3", 3, 30, false, "/g/2"), gateNode("/g/4", 4, 40, false, "/g/3")},
		want:   []row{{"/l/1", "", true}, {"/l/2", "", false}, {"/g/3", "/l/2", false}, {"/g/4", "/g/3", false}},
	}, {
		name:   "the gate's holder has no lease yet, its session holds an older one",
		leases: []Participant{lease("/l/1", 2, 10, true), lease("/l/2", 5, 15, true)},
		gate:   []Participant{gateNode("/g/2", 2, 20, true, ""), gateNode("/g/3", 3, 30, false, "/g/2")},
		want:   []row{{"/l/1", "", true}, {"/l/2", "", true}, {"/g/2", "", false}, {"/g/3", "/g/2", false}},
	}, {
		name:   "the newest lease is its session's, but older than its gate node",
		leases: []Participant{lease("/l/1", 2, 10, true)},
		gate:   []Participant{gateNode("/g/2", 2, 20, true, "")},
		want:   []row{{"/l/1", "", true}, {"/g/2", "", false}},
	}} {
		assert.Equal(t, c.want, rows(withGate(c.leases, c.gate)), c.name)
	}
}
