package locks

import "context"

// A Locker is a lock whose ownership travels in a context: Lock returns the
// context that holds it, and Unlock takes that context back.
type Locker interface {
	// Lock blocks until the lock is held or ctx ends. The returned
	// context holds the lock; it is cancelled when the lock is lost (cause
	// ErrLockLost) or released (cause ErrReleased).
	Lock(ctx context.Context) (context.Context, error)

	// Unlock releases the lock held by ctx.
	Unlock(ctx context.Context) error

	// Path names the lock. MultiLock takes its members in the order of
	// their paths, so that every process takes the same locks in the same
	// order.
	Path() string
}

var (
	_ Locker = (*Mutex)(nil)
	_ Locker = (*RWMutex)(nil)
	_ Locker = readLocker{}
	_ Locker = (*SemaphoreMutex)(nil)
)
