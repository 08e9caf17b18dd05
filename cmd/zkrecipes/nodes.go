package main

import (
	"strconv"
	"strings"
)

// participantName reports whether name, the name of a child of some path,
// looks like a node that a recipe keeps under its path for one participant
// or for its own state:
//   - a sequential node of Curator's layouts, whose name ends in lock-,
//     __READ__, __WRIT__, lease- or latch- and ZooKeeper's sequence (a
//     Mutex's, an RWMutex's, a Semaphore's lease, a Latch's:
//     "_c_<uuid>-lock-0000000007");
//   - a DoubleBarrier's member (a UUID, as Java prints one) or its "ready"
//     node.
//
// It reads nothing, and a directory of the user's may have such a name (a
// tenant's UUID): inspect -r only uses it to tell whether a path may be a
// recipe's, worth reading as one, and then skips the children the recipe
// there does own. A Semaphore's "locks" and "leases" are directories, not
// such nodes.
func participantName(name string) bool {
	if name == "ready" || uuidShaped(name) {
		return true
	}
	for _, n := range []string{"lock-", "__READ__", "__WRIT__", "lease-", "latch-"} {
		if i := strings.LastIndex(name, n); i >= 0 && isSequence(name[i+len(n):]) {
			return true
		}
	}
	return false
}

// isSequence reports whether s is a sequence as ZooKeeper appends it: an
// int32 in ten zero-padded digits, or a minus sign and digits once the
// parent's counter has wrapped.
func isSequence(s string) bool {
	if len(s) < 10 || len(s) > 11 || s[0] == '+' {
		return false
	}
	_, err := strconv.ParseInt(s, 10, 32)
	return err == nil
}

// uuidShaped reports whether s is shaped like Java's UUID.toString, as in
// uuidShape, x standing for a lowercase hex digit.
func uuidShaped(s string) bool {
	const uuidShape = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
	if len(s) != len(uuidShape) {
		return false
	}
	for i := range len(s) {
		hex := strings.IndexByte("0123456789abcdef", s[i]) >= 0
		if (uuidShape[i] == 'x') != hex || (!hex && s[i] != '-') {
			return false
		}
	}
	return true
}
