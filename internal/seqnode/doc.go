// Package seqnode is the sequential-node engine behind every lock recipe:
// Curator's LockInternals, done once. A recipe describes its node (a Spec:
// where it goes, its Shape, the Predicate it holds by); the engine creates
// the node and hands back its Turn: the node's time at the lock, which
// reports its own loss and ends with its release. The recipe wraps the Turn
// in its hold (locks.Hold; an election's term is one too).
//
// # A free Mutex, from Lock to Release
//
// One line per step, caller first; file names are this package's unless a
// package is named. The lock is free, so the first listing says we hold.
//
//	locks.Mutex.Lock      locks/mutex.go    refuses a nil ctx, then acquire
//	locks.acquire         locks/acquire.go  re-enters a hold ctx carries (reenter), else:
//	Acquire               acquire.go        an Exclusive or Gate node queues in the process first
//	queueLocally          local.go          the session's queue for this lock: the pass comes at once
//	acquire               acquire.go        the loop: create, take the turn, check the token and the session
//	createListed          create.go         the listing goes out behind the create (znode.AfterWrite)
//	create                create.go         the protected ephemeral sequential create (znode.Create)
//	take                  acquire.go        reads the first listing and places our node
//	rawListing.interpret  listing.go        refuses another recipe's directory, sorts, proves the token
//	Spec.place            place.go          the Predicate decides: our turn
//	watchedListing.turn   listing.go        the Turn, watching the directory through that listing
//	locks.newHold         locks/hold.go     the hold: its Context, its telemetry
//
//	locks.Hold.Release    locks/hold.go     the outermost Release lets go
//	Turn.Release          release.go        deletes our node (with its mark: marks.go), then ends
//	Turn.delete           release.go        the delete, across lost connections (Session.Retry)
//
// Every ZooKeeper request goes through the session's Retry (package
// recipes), and each read or write is a few lines of package znode. When
// the lock is not free, take hands the first listing to await (waiter.go),
// which waits for the node ahead and takes the turn when it goes.
//
// # Where things happen
//
//   - A node's turn is decided in Spec.place (place.go), from a listing: the
//     first one (take), or a later one (waiter.afterGone, waiter.waitDir).
//     A waiter that was second in line, or whose node ahead was marked,
//     takes its turn when that node goes, with no listing (waiter.afterGone).
//   - The token is chosen when the Turn is made: the one a listing proves
//     (tokenFromListing, listing.go), the creation zxid of our node read
//     with its watch (ownTurn, turn.go) or on its own (Turn.readToken), or a
//     downgrade's (Spec.Token, set in acquire).
//   - The loss watch is armed when the Turn is made (startTurn, turn.go),
//     and its goroutine (Turn.watch, losswatch.go) follows it: a turn that
//     waited watches its own node's data; one taken at once watches the
//     directory until something changes there, then its node's data. The
//     session's end is a loss too.
//
// # Which recipe uses which node and wait
//
//	recipe                node (under the path)        Shape      holds when        a waiter waits for
//	locks.Mutex,          _c_<uuid>-lock-<seq>         Exclusive  first             the node ahead; marked releases
//	  election.Selector
//	election.Latch        _c_<uuid>-latch-<seq>        Exclusive  first             the node ahead; marked releases
//	RWMutex, writer       _c_<uuid>-__WRIT__<seq>      Write      first             every reader ahead (WaitAll), else
//	                                                                                 the node ahead, listing again unless marked
//	RWMutex, reader       _c_<uuid>-__READ__<seq>      Read       no writer ahead   every writer ahead (WaitAll)
//	Semaphore, gate       locks/_c_<uuid>-lock-<seq>   Gate       first             the node ahead; marked releases
//	Semaphore, lease      leases/_c_<uuid>-lease-<seq> Lease      at most N nodes   the directory, and the shared count (Wake)
//
// A SemaphoreMutex is a Semaphore of one lease, and a MultiLock takes each
// member's lock in path order. The barriers queue nothing: they create
// plain nodes and watch them (package barriers).
package seqnode
