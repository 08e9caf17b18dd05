package locks

import (
	"context"
	"fmt"
	"time"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/znode"
)

// A SemaphoreMutex is a lock that is not reentrant: Curator's
// InterProcessSemaphoreMutex, a Semaphore with one lease, on the same nodes.
// Its layout differs from a Mutex's, so the two would not exclude each other:
// Lock refuses a path that a Mutex (or an RWMutex) uses, with recipes.ErrOtherRecipe,
// and they refuse it likewise.
//
// Its Hold can be handed to any goroutine, which may then release it. Lock
// with the Hold's Context fails at once with ErrReentrant, where Curator
// would wait for itself forever. It is safe for concurrent use.
type SemaphoreMutex struct {
	sem *Semaphore
	key holdKey
}

// NewSemaphoreMutex returns the semaphore mutex at path. Like NewMutex, it
// does no I/O and refuses bad input.
func NewSemaphoreMutex(sess *recipes.Session, path string, opts ...recipes.NodeOption) (*SemaphoreMutex, error) {
	sem, err := NewSemaphore(sess, path, 1, opts...)
	if err != nil {
		return nil, err
	}
	return &SemaphoreMutex{sem: sem, key: holdKey{kind: "semaphore-mutex", sess: sess, path: path}}, nil
}

// Path returns the lock's path.
func (m *SemaphoreMutex) Path() string { return m.sem.at.Path }

// zkPath is the lock's path in ZooKeeper, under the session's chroot.
func (m *SemaphoreMutex) zkPath() string { return m.sem.at.Dir }

// Lock takes the lock, waiting until it is free or ctx ends, and returns the
// Hold (see Mutex.Lock; it is not reentrant).
func (m *SemaphoreMutex) Lock(ctx context.Context) (*Hold, error) {
	if err := args.Context(ctx, "locks: SemaphoreMutex.Lock"); err != nil {
		return nil, err
	}
	h, _, err := m.lock(ctx, waitTurn)
	return h, err
}

// TryLock takes the lock if it is free now, and reports whether it did.
func (m *SemaphoreMutex) TryLock(ctx context.Context) (*Hold, bool, error) {
	if err := args.Context(ctx, "locks: SemaphoreMutex.TryLock"); err != nil {
		return nil, false, err
	}
	return m.lock(ctx, tryOnce)
}

func (m *SemaphoreMutex) lock(ctx context.Context, w how) (*Hold, bool, error) {
	if carriesLive(ctx, m.key) {
		return nil, false, fmt.Errorf("lock %s: %w", m.sem.at.Path, ErrReentrant)
	}
	start := time.Now()
	nodes, ok, err := m.sem.take(ctx, 1, w)
	znode.Of(m.sem.sess).Recorder().Acquisition(ctx, m.key.kind, m.sem.at.Path, start, ok, err)
	if err != nil || !ok {
		return nil, false, err
	}
	return newHold(ctx, m.key, m.sem.at.Path, m.sem.sess, nodes[0]), true, nil
}

// Participants lists the holder, then the acquirers waiting, as
// [Semaphore.Participants] does.
func (m *SemaphoreMutex) Participants(ctx context.Context) ([]Participant, error) {
	if err := args.Context(ctx, "locks: SemaphoreMutex.Participants"); err != nil {
		return nil, err
	}
	return m.sem.Participants(ctx)
}
