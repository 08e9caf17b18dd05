package recipes

import "time"

// A Participant is one node of a recipe, as read at one moment: a lock's
// holder or waiter, a semaphore's lease, a double barrier's member. The
// recipe packages list them in queue order (see locks.Inspect,
// barriers.Inspect and each recipe's Participants), and decide Holds and
// Waits by the recipe's own rule, the one its acquirers apply.
//
// A semaphore's lease that waits waits for any lease to go, so it has no
// Waits. The acquirer that holds a semaphore's gate is listed by its lease
// node once it has one (its gate node is then not listed), and those queued
// behind it by their gate nodes: the first waits for that lease node, each
// other for the gate node ahead of it.
type Participant struct {
	Path    string    // the node's full path; locks.Revoke takes it
	Kind    Kind      // what the node is: KindMutex, KindRead, ...
	Data    []byte    // the node's data: by default "host:pid" of its owner
	Created time.Time // when ZooKeeper created it
	Token   int64     // the zxid that created it: its fencing token once it holds
	Session int64     // the ZooKeeper session that owns it (0 if not ephemeral)
	Holds   bool      // it holds the lock or lease; false for barrier members
	Waits   string    // the full path of the node it waits to see gone, if it waits for one (see below)
	Revoked bool      // someone asked its holder to let go (locks.Revoke), over its Data
}

// Kind is what a Participant's node is.
type Kind string

// The kinds of participant, each named after Curator's node name. They are
// here, beside Participant, for every recipe package that reports one (an
// election's too: KindLatch is what election.Latch.Participants and Leader
// report, and what a user of them compares Kind with).
const (
	KindMutex  Kind = "mutex"  // a Mutex's node
	KindRead   Kind = "read"   // an RWMutex's read node
	KindWrite  Kind = "write"  // an RWMutex's write node
	KindLease  Kind = "lease"  // a Semaphore's (or SemaphoreMutex's) lease, or an acquirer queued at its gate
	KindMember Kind = "member" // a DoubleBarrier's member
	KindLatch  Kind = "latch"  // an election.Latch's node (Curator's LeaderLatch)
)
