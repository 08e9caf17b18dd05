package seqnode

// Spec describes one kind of lock node.
type Spec struct {
	Dir      string    // directory holding the lock nodes; created as containers
	Top      string    // the recipe's own path: Dir or one above it; "" for Dir (see znode.ACLs)
	Prefix   string    // lock name of our node: "lock-", "__READ__", "__WRIT__", "lease-"
	Siblings []string  // lock names that order the directory; default {Prefix}
	Data     []byte    // our node's data
	Holds    Predicate // whether we hold, and whom to watch if not

	// Mark makes a release tell the next waiter that the node it waits
	// for held, so that it holds without reading the children again
	// (marks.go). Only for a lock whose every hold is of the lowest node
	// of its directory (a mutex, a write lock whose release writes no mark
	// once it downgraded: Hold.Unmarked). A waiter then watches its own
	// node, as it must to trust a mark, even with Bare.
	Mark bool

	// Sequence, if set, is put after the lock name instead of letting
	// ZooKeeper append one: the node is then plain ephemeral. The
	// read/write lock's downgrade uses it to put a read node at its write
	// node's place in the queue (Curator 5.5's CURATOR-621 fix).
	Sequence string

	// Token, if not 0, is the hold's fencing token instead of its node's
	// zxid: a downgrade's read node, which holds at its write node's place
	// in the queue, keeps the write hold's token, so that a writer queued
	// before the downgrade, which holds after it, has a larger one.
	Token int64

	// Relist makes a waiter read the children again whenever its watched
	// node goes, instead of applying the deletion to the listing it has.
	// Only layouts where a node can appear ahead of a queued one need it.
	Relist bool

	// WaitAll, if set, names the nodes a waiter must see go, all of them,
	// before it holds (indexes into the listing), or returns nil to wait
	// as Holds says. The waiter then watches them all in one round trip
	// and, once they are all gone, holds with no read, Relist or not. It
	// is for a layout where no node can come ahead of ours once those are
	// gone: a reader waiting for the writers ahead of it, a writer
	// waiting for readers only. At most MaxWaitAll nodes: a waiter that
	// would watch more waits as Holds says.
	WaitAll func(nodes []Node, ours int) []int

	// Wake, if set, is called by a waiter on the directory (WatchDir)
	// each time it waits: the channel it returns is closed when something
	// the predicate reads besides the children has changed (a semaphore's
	// shared count) since the waiter's listing, and the waiter then lists
	// again. An error ends the acquisition.
	Wake func() (<-chan struct{}, error)

	// Bare makes a hold that only the recipe itself uses (a semaphore's
	// gate): it has no fencing token and watches nothing but the session,
	// and its waiter watches only the node ahead of it, not its own,
	// unless it watches that node's mark (Mark, with others ahead).
	Bare bool

	// Local makes the goroutines of one session queue for this lock in
	// the process (see local.go): only for a lock one node at a time
	// holds, whose nodes are all created with ZooKeeper's sequence.
	Local bool

	// Refuse, if set, is given the names in the listing made right after
	// our node was created; an error from it ends the acquire (our node is
	// deleted). Locks use it to refuse a directory another recipe uses:
	// of two recipes arriving at once, the later lister sees the other.
	Refuse func(children []string) error
}

// top is the recipe's own path: its parents get the session's ParentACL.
func (s Spec) top() string {
	if s.Top == "" {
		return s.Dir
	}
	return s.Top
}

func (s Spec) siblings() []string {
	if len(s.Siblings) == 0 {
		return []string{s.Prefix}
	}
	return s.Siblings
}
