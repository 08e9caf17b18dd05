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
//	locks.Mutex.Lock     locks/mutex.go    refuses a nil ctx, then acquire
//	locks.acquire        locks/acquire.go  re-enters a hold ctx carries, else asks the
//	                                       engine and records how it went
//	Acquire              acquire.go        an Exclusive or Gate node queues in the process first
//	join                 local.go          the session's queue for this lock: the pass comes at once
//	acquire              acquire.go        the loop: create, decide by the first listing,
//	                                       check the token and the session
//	create               create.go         the protected ephemeral sequential create
//	                                       (znode.Create), the listing behind it in its
//	                                       round trip (znode.AfterWrite)
//	listOurs             listing.go        lists (znode.ChildrenW), sorts (ParseAll), finds
//	                                       our node by its UUID, refuses another recipe's
//	                                       directory, places our node (Spec.locate),
//	                                       proves the token
//	pass.created         local.go          the session's next goroutine may create its node
//	newTurn              turn.go           the Turn, with the listing's directory watch:
//	                                       starts Turn.follow
//	locks.newHold        locks/hold.go     the hold: its Context, its telemetry
//	                                       (Turn.OnEnd, Turn.AfterRevoke)
//
//	locks.Hold.Release   locks/hold.go     the outermost Release lets go
//	nodeBacking.release  locks/backing.go  a hold of one node lets go of its turn
//	Turn.Release         release.go        deletes our node across lost connections
//	                                       (Session.Retry), with its mark (marks.go),
//	                                       then ends the turn
//	pass.leave           local.go          at the turn's end: the next goroutine's pass
//
// make enginepath lists every function on the way that calls another of the
// module: the steps above and those in parentheses, with znode.Of (a
// session's Parts): 20, in locks, seqnode and znode, besides the root's
// Session. make test fails if there are more. The rest are leaves:
// names.go's parsing, the predicates, signal.go, znode's accessors.
//
// Every ZooKeeper request goes through the session's Retry (package
// recipes), and each read or write is a few lines of package znode. When
// the lock is not free, acquire hands the first listing to await (waiter.go),
// which waits for the node ahead and takes the turn when it goes.
//
// # Where things happen
//
//   - A node's turn is decided by the recipe's Predicate (predicate.go:
//     FirstN, AtMost; the RWMutex's are in package locks), applied to a
//     listing by Spec.locate (place.go): to every listing of the directory
//     (listOurs), and to the children a waiter reads, unwatched (list), once
//     the node it waited for is gone (waiter.locateBy, from
//     waiter.afterGone). A waiter whose node ahead goes takes its turn with
//     no listing (waiter.afterGone sets its place to the turn) if the
//     predicate said it would hold once that node was gone (place.turnAfter;
//     for a Write node only where WaitAll named every node ahead) or the
//     release was marked (marks.go), and no connection was lost since the
//     waiter watched its own node (ownWatch.current, ownwatch.go). await
//     then makes the Turn (waiter.newTurn).
//   - The loss watch is a ZooKeeper watch that the Turn is handed when it is
//     made: the directory watch of the listing that decided it (listOurs);
//     for a turn that waited for a node, the watch of our own node's data
//     that the waiter set (waiter.watchAhead, watchOwn); a waiter on the
//     directory (a Lease) keeps the directory's. A Gate watches only the
//     session. newTurn (turn.go) starts the goroutine that follows the
//     watch (Turn.follow, losswatch.go). A turn that follows the directory
//     reads its node and watches its data at the first change there, or
//     when Revoked, OnRevoke or WatchNode asks (Turn.toData). The session's
//     end is a loss too.
//   - The token is set when the Turn is made: for a turn decided by a
//     listing, the directory's pzxid if the listing proves it
//     (tokenFromListing, listing.go), else, for a waiter on the directory,
//     our node's creation zxid as it read it while waiting (readCzxid); for
//     a turn that waited for a node, our node's creation zxid as the waiter
//     read it (ownTurn, turn.go). acquire then puts a downgrade's in its
//     place (Spec.Token) and, if the token is still unknown, reads our node
//     (Turn.readToken), unless the loss watcher's read filled it first
//     (Turn.watchData). A Gate has none.
//
// # Which recipe uses which node and wait
//
//	recipe              node, under the path           Shape      holds when
//	                                                              a waiter waits for
//	locks.Mutex,        _c_<uuid>-lock-<seq>           Exclusive  first
//	election.Selector                                             the node ahead; marked releases
//	election.Latch      _c_<uuid>-latch-<seq>          Exclusive  first
//	                                                              the node ahead; marked releases
//	RWMutex, writer     _c_<uuid>-__WRIT__<seq>        Write      first
//	                                                              every reader ahead (WaitAll),
//	                                                              else the node ahead, listing
//	                                                              again unless marked
//	RWMutex, reader     _c_<uuid>-__READ__<seq>        Read       no writer ahead
//	                                                              every writer ahead (WaitAll)
//	Semaphore, gate     locks/_c_<uuid>-lock-<seq>     Gate       first
//	                                                              the node ahead; marked releases
//	Semaphore, lease    leases/_c_<uuid>-lease-<seq>   Lease      at most N nodes
//	                                                              the directory, and the
//	                                                              shared count (Wake)
//
// A SemaphoreMutex is a Semaphore of one lease, and a MultiLock tries every
// member's lock at once and waits for a busy one in path order. The barriers queue nothing: they create
// plain nodes and watch them (package barriers).
package seqnode
