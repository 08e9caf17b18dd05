// Package locks implements Apache Curator's lock recipes on ZooKeeper, the Go
// way, on the same znodes so Go and Java (Curator 5.x) processes exclude each
// other.
//
//	locks.Mutex           Curator InterProcessMutex: reentrant
//	locks.RWMutex         InterProcessReadWriteLock: reentrant halves, safe downgrade
//	locks.Semaphore       InterProcessSemaphoreV2: n leases, each a Lease
//	locks.SemaphoreMutex  InterProcessSemaphoreMutex: not reentrant
//	locks.MultiLock       InterProcessMultiLock: several locks as one, no deadlock
//
// All but Semaphore are a Locker. They share one engine: a queue of
// sequential nodes in which each waiter watches only the one node it waits
// for, so a release wakes one waiter.
//
// # Reentrancy
//
// Go has no thread identity, so ownership travels in the context. Lock
// returns a context that holds the lock; Unlock takes it back:
//
//	held, err := m.Lock(ctx)
//	if err != nil {
//		return err
//	}
//	defer m.Unlock(held)
//	doWork(held) // may call m.Lock(held) again: it re-enters
//
// A Lock whose context (or an ancestor of it) already holds the mutex
// re-enters at once, without talking to ZooKeeper; each Lock needs its own
// Unlock, and the outermost Unlock releases. Any other context queues, even
// in a goroutine that shares the same Mutex value: goroutines exclude each
// other unless one hands its held context to another, which shares the
// ownership with it. Ownership is per session and path, so two Mutex values
// for the same path in one session recognise each other's holds.
//
// # Lock loss
//
// Curator never tells a holder that its lock is gone; this package does. The
// held context is cancelled with cause ErrLockLost (see context.Cause) when
//   - the session ends (ZooKeeper expired it, or the client was cut off for
//     long enough that it might have; see recipes.Session), or
//   - the lock node is deleted by someone else.
//
// Pass the held context to the work done under the lock so that it stops when
// the lock is lost. The held context is also cancelled, with cause ErrReleased,
// by the outermost Unlock, and it is a child of the context given to Lock, so
// cancelling that one cancels it too (without releasing the lock: that is
// Unlock's job). After a loss, Unlock still cleans up and returns an error
// wrapping ErrLockLost.
//
// While the session is suspended (connection down, session not yet known to be
// lost) the lock is reported as held: it is, unless the session is about to be
// declared lost. Work that must not run during that window can watch the
// session's state.
//
// # Fencing
//
// Losing a lock is always noticed a little late by the work done under it (a
// garbage-collection pause, a slow disk). Token returns a fencing token, the
// zxid that created the holder's node: it grows with every new holder of the
// lock, so a storage system can refuse writes that carry a token lower than
// one it has seen. For data kept in ZooKeeper itself, Multi (or Guard) makes a
// transaction conditional on the lock node still existing.
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
// nothing is created, and a held context that has ended does not re-enter.
//
// # Revocation
//
// Revoke asks a lock's holder to let go by writing "__REVOKE__" into its node,
// Curator's protocol; Revoked returns a channel that is closed when that
// happens. It is cooperative: nothing is released until the holder calls
// Unlock. There is no makeRevocable step: the first call to Revoked starts
// watching, and sees a request written before it. Revoke accepts only a
// Mutex's or an RWMutex's node (a semaphore lease has nobody listening) and
// returns ErrNotRevocable for anything else, or for a node that is gone; it
// never writes over a recipe's own nodes.
//
// # Read/write lock, semaphores, multi-lock
//
// An RWMutex's writer must be first in the queue; a reader needs no writer
// ahead of it. Readers and writers are served in queue order, so new readers
// cannot starve a waiting writer. A writer may take the read lock (downgrade);
// a reader asking for the write lock gets ErrUpgrade at once.
//
// A Semaphore hands out Leases, each released on its own. Acquire takes all
// the leases it asks for or none, and clients that disagree on the maximum are
// told (ErrMaxLeases). A SemaphoreMutex is a one-lease semaphore behind a held
// context; asking for it again with that context fails with ErrReentrant.
//
// A MultiLock takes its members in path order, whatever order it was given
// them in, so two multi-locks over the same locks cannot deadlock; it takes
// all or none within one deadline, and releases past failures.
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
// A semaphore's maximum is recorded as "maxLeases=N" in P's data.
//
// Recipes of different kinds on one path would not exclude each other, so
// an acquire that finds another kind's nodes under P refuses with
// ErrOtherRecipe and leaves nothing behind (see ErrOtherRecipe).
//
// # Curator compatibility
//
// The layouts, names, ordering, container parents and revocation protocol are
// Curator's, so each recipe excludes its Java counterpart on the same path. The
// default node data differs (Curator writes the host's IP address; this package
// writes "host:pid"); data never affects exclusion. See docs/curator.md for the
// full mapping.
package locks
