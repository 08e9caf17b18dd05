package seqnode

// Spec describes one kind of lock node: where it goes, what it is (Shape),
// and the rule it holds by (Predicate).
//
// Its functions (Predicate, WaitAll, Refuse) may run on a goroutine of the
// engine's while the acquiring one waits for its create's answer (the
// listing behind the create reads them), so they must be safe to call from
// any goroutine; every recipe's are pure functions of their arguments.
type Spec struct {
	Dir       string    // directory holding the lock nodes; created as containers
	Top       string    // the recipe's own path: Dir or one above it; "" for Dir (see znode.Create)
	Prefix    string    // lock name of our node: "lock-", "__READ__", "__WRIT__", "lease-"
	Siblings  []string  // lock names that order the directory; default {Prefix}
	Data      []byte    // our node's data
	Shape     Shape     // what the node is: how it waits, and what its release tells
	Predicate Predicate // whether we hold, and whom to watch if not

	// The rest is for one recipe each: what it needs, and why.

	WaitAll  func(nodes []Node, ours int) []int // RWMutex: the nodes ahead to see go, all, to hold with no read (locateAll)
	Wake     func() (<-chan struct{}, error)    // shared-count Semaphore: wakes a Lease waiter when the count changes
	Sequence string                             // downgrade: the write node's sequence, to queue the read node at its place
	Token    int64                              // downgrade: the write hold's token, which the read hold keeps
	Refuse   func(children []string) error      // locks: refuses a directory another recipe uses, at the first listing
}

// A Shape is what kind of node a recipe queues: how it holds, how its
// waiter waits, and what its release tells the waiter behind it. The zero
// Shape, which no recipe uses (the engine's tests do), behaves as Read.
type Shape int

const (
	// Exclusive is a Mutex's node (an election's latch's too): the first
	// node holds. The goroutines of one session queue for it in the
	// process (local.go), and a release marks the node, so that the waiter
	// behind holds with no read (marks.go).
	Exclusive Shape = iota + 1

	// Gate is a Semaphore's gate: an Exclusive node whose hold only the
	// recipe uses, so it has no fencing token and watches nothing but the
	// session. Its waiter watches only the node ahead, and its own node
	// only to trust a mark.
	Gate

	// Write is an RWMutex's write node: the first node holds, and its
	// release is marked, as an Exclusive node's. A downgrade can put a
	// read node ahead of a queued writer, so a writer behind another reads
	// the children again when the node it waits for goes, unless that
	// release was marked.
	Write

	// Read is an RWMutex's read node, which holds as its Predicate says (no writer
	// ahead); its release tells nothing.
	Read

	// Lease is a Semaphore's lease, which holds as its Predicate says (few enough
	// nodes). Its waiter, the only one (behind the gate), watches the
	// directory, and is woken by Wake too.
	Lease
)

// marks reports whether a release of this node marks it (marks.go): only
// for a lock whose every hold is of the lowest node of its directory (an
// Exclusive or Gate node, a Write node whose release writes no mark once
// it downgraded: Turn.Unmarked).
func (s Spec) marks() bool { return s.Shape == Exclusive || s.Shape == Gate || s.Shape == Write }

// relists reports whether a waiter reads the children again whenever the
// node it waits for goes, rather than applying the deletion to what it
// knows: only where a node can appear ahead of a queued one (Write).
func (s Spec) relists() bool { return s.Shape == Write }

// bare reports whether the turn is one only its recipe uses (Gate): no
// fencing token, no watch but the session's.
func (s Spec) bare() bool { return s.Shape == Gate }

// local reports whether the goroutines of one session queue for the lock
// in the process (local.go): for a lock one node at a time holds, whose
// nodes are all created with ZooKeeper's sequence.
func (s Spec) local() bool { return s.Shape == Exclusive || s.Shape == Gate }

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
