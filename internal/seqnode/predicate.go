package seqnode

// A Predicate decides, from the children of a lock directory in lock order
// and the index of our node among them, whether we hold the lock, and if not,
// the index of the one node to watch: when that node goes, the predicate is
// asked again.
//
// A predicate must be monotone: removing nodes other than ours never turns
// "holds" into "waits". That is what lets the engine apply a deletion to the
// listing it already has instead of reading the children again.
type Predicate func(nodes []Node, ours int) (holds bool, watch int)

// FirstN is the standard predicate (Curator's StandardLockInternalsDriver):
// the first n nodes hold, and a waiter watches the node n places ahead of it.
// n is 1 for a mutex or a write lock.
func FirstN(n int) Predicate {
	return func(_ []Node, ours int) (bool, int) {
		if ours < n {
			return true, -1
		}
		return false, ours - n
	}
}
