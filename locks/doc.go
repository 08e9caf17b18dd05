// Package locks implements Apache Curator's lock recipes on ZooKeeper, the Go
// way, on the same znodes so Go and Java (Curator 5.x) processes exclude each
// other.
//
// Today it has Mutex (Curator's InterProcessMutex); the semaphores, the
// read/write lock and the multi-lock follow on the same engine.
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
// midway: cancellation takes effect when the request in flight returns.
//
// # Revocation
//
// Revoke asks a lock's holder to let go by writing "__REVOKE__" into its node,
// Curator's protocol; Revoked returns a channel that is closed when that
// happens. It is cooperative: nothing is released until the holder calls
// Unlock. There is no makeRevocable step: the first call to Revoked starts
// watching, and sees a request written before it.
//
// # Znode layout
//
// A Mutex at path P keeps one node per holder or waiter in P:
//
//	P/_c_<uuid>-lock-<10-digit sequence>   ephemeral sequential, data "host:pid"
//
// P and its missing ancestors are created as container nodes, which ZooKeeper
// removes once they are empty. The lowest sequence holds the lock; each waiter
// watches only the node just ahead of it, so a release wakes exactly one
// waiter, and waiters are served first come, first served.
//
// # Curator compatibility
//
// The layout, names, ordering, container parents and revocation protocol are
// Curator's (InterProcessMutex), so a Go Mutex and a Java InterProcessMutex on
// the same path exclude each other. The default node data differs (Curator
// writes the host's IP address; this package writes "host:pid"); data never
// affects exclusion. See docs/curator.md for the full mapping.
package locks
