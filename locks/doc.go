// Package locks implements Apache Curator's lock recipes on ZooKeeper, the Go
// way, on the same znodes so Go and Java (Curator 5.x) processes exclude each
// other.
//
//	locks.Mutex           Curator InterProcessMutex: reentrant
//	locks.RWMutex         InterProcessReadWriteLock: reentrant halves, safe downgrade
//	locks.Semaphore       InterProcessSemaphoreV2: n leases, each a Hold
//	locks.SemaphoreMutex  InterProcessSemaphoreMutex: not reentrant
//	locks.MultiLock       InterProcessMultiLock: several locks as one, no deadlock
//
// Every acquire returns a [Hold], one type for all of them. All but Semaphore
// are a Locker. They share one engine: a queue of sequential nodes in which
// each waiter watches only the one node it waits for, so a release wakes one
// waiter.
//
// Constructors do no I/O and refuse bad input with [recipes.ErrInvalid], creating
// nothing, among it a lock whose requests ZooKeeper would drop: each works
// out the largest request its lock sends (path under the chroot, node name
// with ZooKeeper's sequence, data, ACL, the release's transaction) and
// refuses one over [recipes.MaxRequest] (docs/semantics.md, "Request size").
//
// # Reentrancy
//
// Go has no thread identity, so ownership is the Hold, and travels along a
// call chain in the Hold's Context:
//
//	h, err := m.Lock(ctx) // ctx bounds the wait only
//	if err != nil {
//		return err
//	}
//	defer h.Release(context.Background())
//	doWork(h.Context()) // may call m.Lock(h.Context()) again: it re-enters
//
// A Lock whose context is (or derives from) the Context of a Hold of the same
// lock re-enters at once, without talking to ZooKeeper, and returns that
// Hold; each Lock needs its own Release, and the outermost Release releases.
// Any other context queues, even in a goroutine that shares the same Mutex
// value: goroutines exclude each other unless one hands its Hold (or its
// Context) to another, which shares the ownership with it. Ownership is per
// session and path, so two Mutex values for the same path in one session
// recognise each other's holds. A nested Lock given the context that
// acquired the outer hold (not h.Context()) therefore waits for that hold,
// forever without a deadline; a Mutex or RWMutex waiter next in line behind a
// node of its own session says so at Warn through the session's logger
// (recipes.WithSlog), naming the path and h.Context(). Goroutines of one
// session that merely contend for a lock get the same record.
//
// # Lock loss
//
// Curator never tells a holder that its lock is gone; this package does. A
// Hold ends (Done is closed, Err wraps ErrLockLost with the cause, and its
// Context is cancelled with that cause) when
//   - the session ends (ZooKeeper expired it, or the client was cut off for
//     long enough that it might have; see recipes.Session), or
//   - the lock node is deleted by someone else.
//
// Do the work under the lock in the Hold's Context so that it stops when the
// lock is lost. That context carries the values of the context given to Lock,
// but not its deadline or cancellation, which bound only the wait: a lock
// taken within 5 seconds stays held past them. The outermost Release cancels
// it, with cause ErrReleased. After a loss, Release still cleans up and
// returns an error wrapping ErrLockLost.
//
// While the session is suspended (connection down, session not yet known to be
// lost) the lock is reported as held: it is, unless the session is about to be
// declared lost. Work that must not run during that window can watch the
// session's state.
//
// # Fencing
//
// Losing a lock is always noticed a little late by the work done under it (a
// garbage-collection pause, a slow disk). [Hold.Token] returns a fencing token,
// a zxid from the hold's start: it grows with every new holder of the lock,
// so a storage system can refuse writes that carry a token lower
// than one it has seen. For data kept in ZooKeeper itself, [Hold.Multi] (or
// Guard) makes a transaction conditional on the lock node still existing. A
// multi-lock's Hold guards all its members, but its Token is 0: fence each
// member's store with that member's token (Members), as the largest of them
// may be larger than a later holder's token on one member.
//
// # Cancellation
//
// If the context given to Lock ends while waiting, Lock returns its error and
// deletes the node it queued with, on a context of its own (bounded by the
// session timeout; if ZooKeeper is unreachable that long, the session keeps
// deleting in the background, or the node dies with the session). No node and
// no goroutine is left behind. Requests already sent are not abandoned
// midway: cancellation takes effect when the request in flight returns. A
// context that has already ended gets its cause back before any request:
// nothing is created, and a Hold's Context that has ended does not re-enter.
// An error from a context's end is its cause (context.Cause), which
// errors.Is also matches with context.Canceled or context.DeadlineExceeded.
// Release takes a context too: it bounds the wait for ZooKeeper to confirm
// the delete, past which the session finishes it in the background. A nil
// context is refused by every call, with an error wrapping recipes.ErrInvalid that
// names the call, before anything is sent or changed: a Release(nil) leaves
// the lock held, to be released with a context.
//
// # Revocation
//
// [Revoke] asks a lock's holder to let go by writing "__REVOKE__" into its node,
// Curator's protocol; [Hold.Revoked] returns a channel that is closed when that
// happens. It is cooperative: nothing is released until the holder calls
// Release. There is no makeRevocable step: the first call to Revoked starts
// watching, and sees a request written before it. Revoke accepts only a
// Mutex's or an RWMutex's node (a semaphore lease has nobody listening) and
// returns ErrNotRevocable for anything else, or for a node that is gone; it
// never writes over a recipe's own nodes.
//
// # Read/write lock, semaphores, multi-lock
//
// An [RWMutex]'s writer must be first in the queue; a reader needs no writer
// ahead of it. Readers and writers are served in queue order, so new readers
// cannot starve a waiting writer. A writer may take the read lock with its
// Hold's Context (downgrade): the read Hold is a full Hold of its own, which
// outlives the write Hold. A reader asking for the write lock gets [ErrUpgrade]
// at once.
//
// A [Semaphore] hands out leases, each a Hold released on its own. Acquire
// takes all the leases it asks for or none, and clients that disagree on the
// maximum are told (ErrMaxLeases). A SemaphoreMutex is a one-lease semaphore;
// asking for it again with its Hold's Context fails with ErrReentrant.
//
// A [MultiLock] asks for all its members at once and, when one is busy,
// waits for them in path order, whatever order it was given them in, so two
// multi-locks over the same locks cannot deadlock; it takes all or none
// within one deadline, and releases past failures. Its Hold aggregates the
// members' Holds.
//
// # Znode layout
//
// P and its missing ancestors are created as container nodes, which ZooKeeper
// removes once they are empty. Lock nodes are ephemeral sequential, with data
// "host:pid" by default:
//
//	Mutex at P           P/_c_<uuid>-lock-<seq>
//	RWMutex at P         P/_c_<uuid>-__READ__<seq>, P/_c_<uuid>-__WRIT__<seq>
//	Semaphore at P       P/locks/_c_<uuid>-lock-<seq>   (the gate: a Mutex)
//	                     P/leases/_c_<uuid>-lease-<seq> (one per lease)
//	SemaphoreMutex at P  as a Semaphore with one lease
//
// The lowest sequence comes first; each waiter watches only the node it waits
// for, except the one acquirer at a semaphore's gate, which watches the leases.
// A semaphore's maximum is recorded as "maxLeases=N" in P's data; the record
// binds while a lease is held or an acquirer is queued at the gate, and an
// idle semaphore takes the next client's maximum.
//
// Recipes of different kinds on one path would not exclude each other, so
// an acquire that finds another kind's nodes under P refuses with
// recipes.ErrOtherRecipe and leaves nothing behind (see recipes.ErrOtherRecipe).
//
// Each recipe's Participants lists its nodes in queue order, with each one's
// Kind, whether it Holds and the node it Waits for, decided by the same
// predicate its acquirers apply. [Inspect] tells from the names under any path
// which lock recipes use it, and lists each one's participants: a tool
// needs nothing else to show who holds what (barriers.Inspect does the same
// for the barriers).
//
// # Curator compatibility
//
// The layouts, names, ordering, container parents and revocation protocol are
// Curator's, so each recipe excludes its Java counterpart on the same path. The
// default node data differs (Curator writes the host's IP address; this package
// writes "host:pid"); data never affects exclusion. See docs/curator.md for the
// full mapping.
package locks
