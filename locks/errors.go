package locks

import (
	"errors"

	"github.com/zkrecipes/recipes/internal/seqnode"
)

// Errors returned by the locks in this package. Match them with errors.Is;
// each is wrapped with the details of the case.
var (
	// ErrNotHeld is returned by a Release beyond the acquires it matches
	// (the hold was released already). Nothing is deleted.
	ErrNotHeld = errors.New("locks: not held")

	// ErrLockLost means the lock was taken away while held: its node was
	// deleted by someone else, or the session ended (expired, or cut off
	// for the session timeout). Hold.Err wraps it, it is the cause of the
	// Hold's Context's cancellation (see context.Cause), and Release returns
	// it afterwards.
	ErrLockLost = errLockLost() // "locks: lock lost"

	// ErrReleased is Hold.Err, and the cause of the Hold's Context's
	// cancellation, after the outermost Release.
	ErrReleased = errReleased() // "locks: released"

	// ErrUpgrade is returned when the Context of an RWMutex's read Hold
	// asks for its write lock: its own read node would block it
	// forever.
	ErrUpgrade = errors.New("locks: cannot upgrade a read lock to a write lock")

	// ErrReentrant is returned when the Context of a Hold of a lock that is
	// not reentrant (SemaphoreMutex) asks for it again, which would otherwise
	// wait for itself forever.
	ErrReentrant = errors.New("locks: lock is not reentrant and is already held by this context")

	// ErrMaxLeases is returned when a Semaphore's maximum differs from the
	// one another client recorded for the same path.
	ErrMaxLeases = errors.New("locks: semaphore used with a different number of leases")

	// ErrNoSharedCount is returned by an Acquire or TryAcquire of a
	// Semaphore made by NewSharedCountSemaphore whose count node does not
	// exist, or went while it waited: the count is the caller's to make
	// (SetSharedCount), and waiting would not bring it. The error also
	// wraps zk.ErrNoNode. The acquire leaves no node behind.
	ErrNoSharedCount = errors.New("locks: shared count does not exist")

	// ErrNotRevocable is returned by Revoke for a node that is not a lock
	// node a holder could be listening on: not a Mutex's or an RWMutex's
	// node (a semaphore's lease, a recipe's own path, a barrier), or no
	// node at all (then the error also wraps zk.ErrNoNode). Nothing is
	// written.
	ErrNotRevocable = errors.New("locks: not a revocable lock node")
)

// ErrLockLost and ErrReleased are the engine's own errors, which its turns
// end with: declared there, and only exported here, through a function call,
// as io/fs does, which keeps the internal name out of the documentation.

func errLockLost() error { return seqnode.ErrLost }

func errReleased() error { return seqnode.ErrReleased }
