package barriers

import (
	"fmt"
	"strconv"

	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/layout"
	"github.com/zkrecipes/recipes/internal/seqnode"
)

// A double barrier's member node is named by a UUID, as in Curator, which
// counts the barrier's children and never reads their names or data. Ours
// carry the member count: a version 8 UUID (RFC 9562's layout for
// application-defined UUIDs, where Java's UUID.randomUUID makes version 4)
// whose first 32 bits are the count, the rest random. So every member sees
// the others' counts in the listing it makes anyway, at no extra request,
// and the layout is still Curator's.
const memberVersion = '8' // the version digit of a member name carrying a count

// maxMembers is the largest member count a member name carries: the most
// NewDoubleBarrier takes.
const maxMembers = args.MaxCount

// memberName returns a new member name that carries the member count n.
func memberName(n int) string {
	name := []byte(seqnode.NewUUID())
	copy(name[:8], fmt.Sprintf("%08x", n))
	name[14] = memberVersion
	return string(name)
}

// membersOf returns the member count a member name carries, and false for
// a name that carries none (a Curator member's, or another child's).
func membersOf(name string) (int, bool) {
	if !layout.UUIDShaped(name) || name[14] != memberVersion {
		return 0, false
	}
	n, err := strconv.ParseUint(name[:8], 16, 32)
	if err != nil || n < 1 || n > maxMembers {
		return 0, false
	}
	return int(n), true
}

// disagreeing returns the member count of the first of names, children of
// the barrier, that carries one other than members; 0 if none does.
func disagreeing(names []string, members int) int {
	for _, name := range names {
		if n, ok := membersOf(name); ok && n != members {
			return n
		}
	}
	return 0
}
