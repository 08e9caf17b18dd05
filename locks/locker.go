package locks

import "context"

// A Locker is a lock: Lock returns its Hold, which releases it. Mutex,
// RWMutex (and its RLocker), SemaphoreMutex and MultiLock are Lockers.
type Locker interface {
	// Lock blocks until the lock is held or ctx ends, and returns the
	// Hold. ctx bounds only the wait.
	Lock(ctx context.Context) (*Hold, error)

	// Path names the lock. MultiLock waits for its members in the order
	// of their paths, so that every process waits for the same locks in
	// the same order.
	Path() string
}

var (
	_ Locker = (*Mutex)(nil)
	_ Locker = (*RWMutex)(nil)
	_ Locker = readLocker{}
	_ Locker = (*SemaphoreMutex)(nil)
	_ Locker = (*MultiLock)(nil)
)
