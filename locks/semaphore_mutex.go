package locks

import (
	"context"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
)

// A SemaphoreMutex is a lock that is not reentrant: Curator's
// InterProcessSemaphoreMutex, a Semaphore with one lease, on the same nodes.
// Its layout differs from a Mutex's, so the two would not exclude each other:
// Lock refuses a path that a Mutex (or an RWMutex) uses, with ErrOtherRecipe,
// and they refuse it likewise.
//
// Its held context can be handed to any goroutine, which may then Unlock it.
// Lock with a context that already holds it fails at once with ErrReentrant,
// where Curator would wait for itself forever. It is safe for concurrent use.
type SemaphoreMutex struct {
	sem *Semaphore
	key holdKey
}

// NewSemaphoreMutex returns the semaphore mutex at path. Like NewMutex, it
// does no I/O and refuses bad input.
func NewSemaphoreMutex(sess *recipes.Session, path string, opts ...Option) (*SemaphoreMutex, error) {
	sem, err := NewSemaphore(sess, path, 1, opts...)
	if err != nil {
		return nil, err
	}
	return &SemaphoreMutex{sem: sem, key: holdKey{kind: "semaphore-mutex", sess: sess, path: path}}, nil
}

// Path returns the lock's path.
func (m *SemaphoreMutex) Path() string { return m.sem.path }

// Lock takes the lock, waiting until it is free or ctx ends, and returns the
// context that holds it (see Mutex.Lock; it is not reentrant).
func (m *SemaphoreMutex) Lock(ctx context.Context) (context.Context, error) {
	held, _, err := m.lock(ctx, true)
	return held, err
}

// TryLock takes the lock if it is free now, and reports whether it did.
func (m *SemaphoreMutex) TryLock(ctx context.Context) (context.Context, bool, error) {
	return m.lock(ctx, false)
}

func (m *SemaphoreMutex) lock(ctx context.Context, wait bool) (context.Context, bool, error) {
	if holds(ctx, m.key) {
		return nil, false, fmt.Errorf("lock %s: %w", m.sem.path, ErrReentrant)
	}
	leases, ok, err := m.sem.acquire(ctx, 1, wait)
	if err != nil || !ok {
		return nil, false, err
	}
	return attach(ctx, nil, m.key, leases[0].hold), true, nil
}

// Unlock releases the lock held by ctx; see Mutex.Unlock.
func (m *SemaphoreMutex) Unlock(ctx context.Context) error {
	return release(ctx, m.key)
}

// Token returns the fencing token of the hold ctx carries; see Mutex.Token.
func (m *SemaphoreMutex) Token(ctx context.Context) (int64, error) {
	return token(ctx, m.key)
}

// Guard returns a Multi check on the hold ctx carries; see Mutex.Guard.
func (m *SemaphoreMutex) Guard(ctx context.Context) (*zk.CheckVersionRequest, error) {
	return guard(ctx, m.key)
}

// Multi runs ops as one transaction that succeeds only while ctx still holds
// the lock; see Mutex.Multi.
func (m *SemaphoreMutex) Multi(ctx context.Context, ops ...any) ([]zk.MultiResponse, error) {
	return guardedMulti(ctx, m.sem.sess, m.key, ops)
}

// Participants lists the holder and the one acquirer waiting at the gate.
func (m *SemaphoreMutex) Participants(ctx context.Context) ([]Participant, error) {
	return m.sem.Participants(ctx)
}
