package seqnode

// A Predicate decides, from the children of a lock directory in lock order
// and the index of our node among them, whether we hold the lock, and if not,
// the index of the one node to watch: when that node goes, the predicate is
// asked again.
//
// A predicate may return WatchDir instead of an index: then the waiter
// watches the directory's children and asks again at any change. Only a
// recipe that lets one waiter at a time wait (the semaphore, behind its
// gate) may do that without a herd.
//
// A predicate must be monotone: removing nodes other than ours never turns
// "holds" into "waits". That is what lets the engine apply a deletion to the
// listing it already has instead of reading the children again.
type Predicate func(nodes []Node, ours int) (holds bool, watch int)

// WatchDir, returned as the index to watch, asks to watch the directory.
const WatchDir = -1

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

// AtMost holds while the directory has at most n children, ours included
// (Curator's InterProcessSemaphoreV2 lease rule), and watches the directory.
// Under the semaphore's gate only the newest node waits, so this is the same
// as being among the first n.
func AtMost(n int) Predicate {
	return func(nodes []Node, _ int) (bool, int) {
		if len(nodes) <= n {
			return true, -1
		}
		return false, WatchDir
	}
}
