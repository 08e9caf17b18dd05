package locks

import (
	"context"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/layout"
	"github.com/zkrecipes/recipes/internal/seqnode"
)

// A Mutex is a reentrant lock shared by every process that uses the same
// path: Curator's InterProcessMutex, on the same nodes, so Go and Java
// processes exclude each other. See the package documentation for ownership,
// loss, fencing and cancellation.
//
// A Mutex holds no state of its own beyond its configuration; it is safe for
// concurrent use, and any number of goroutines may share one value.
type Mutex struct {
	sess *recipes.Session
	spec seqnode.Spec
	key  holdKey
}

// mutexLockName is the lock name of Curator's InterProcessMutex nodes.
const mutexLockName = layout.MutexLockName

// NewMutex returns the mutex at path. It does no I/O: the path's nodes are
// created when the lock is first taken. It fails, creating nothing, if sess is
// nil, path is not a valid absolute ZooKeeper path, or the data is too large.
func NewMutex(sess *recipes.Session, path string, opts ...Option) (*Mutex, error) {
	cfg, err := validate(sess, path, opts)
	if err != nil {
		return nil, err
	}
	return &Mutex{
		sess: sess,
		spec: seqnode.Spec{Dir: path, Prefix: mutexLockName, Data: cfg.data, Holds: seqnode.FirstN(1), Refuse: refuseOthers(path, layout.Mutex)},
		key:  holdKey{kind: "mutex", sess: sess, path: path},
	}, nil
}

// refuseOthers returns the engine's check that no other recipe uses path.
func refuseOthers(path string, own layout.Kind) func([]string) error {
	return func(children []string) error {
		return layout.Check(path, children, own, ErrOtherRecipe)
	}
}

// Path returns the mutex's path.
func (m *Mutex) Path() string { return m.spec.Dir }

// Lock blocks until the mutex is held, and returns the context that holds it.
//
// If ctx already holds this mutex, Lock re-enters at once, with no ZooKeeper
// request, and returns ctx; each Lock needs its own Unlock. Otherwise Lock
// queues behind the current holder and waiters (first come, first served).
//
// The returned context is a child of ctx. It is cancelled when the lock is
// lost, with cause ErrLockLost (see context.Cause), and when Unlock releases
// it, with cause ErrReleased.
//
// If ctx ends or an error occurs while waiting, Lock returns the error and
// leaves no node behind. If ctx has already ended, Lock returns its cause
// at once: it sends no request, and does not re-enter either.
func (m *Mutex) Lock(ctx context.Context) (context.Context, error) {
	held, _, err := m.lock(ctx, true)
	return held, err
}

// TryLock takes the mutex if it is free now, and reports whether it did. It
// never waits for another holder (it does talk to ZooKeeper, within ctx).
// When it returns false it leaves no node behind. A ctx that already holds
// the mutex re-enters, as with Lock.
func (m *Mutex) TryLock(ctx context.Context) (context.Context, bool, error) {
	return m.lock(ctx, false)
}

func (m *Mutex) lock(ctx context.Context, wait bool) (context.Context, bool, error) {
	return acquire(ctx, nil, m.sess, m.key, m.spec, wait)
}

// Unlock undoes one Lock made with ctx (or a context derived from it). The
// outermost Unlock deletes the lock node, retrying across connection loss
// until ZooKeeper confirms, and cancels the held context.
//
// Unlock returns an error wrapping ErrNotHeld, and deletes nothing, if ctx
// does not hold the mutex. If the lock was lost while held, Unlock still
// cleans up and returns an error wrapping ErrLockLost: the work done under
// the lock was not protected to the end.
func (m *Mutex) Unlock(ctx context.Context) error {
	return release(ctx, m.key)
}

// Token returns the fencing token of the hold that ctx carries: a number
// that grows with every new holder of this mutex, for a storage system to
// refuse writes from a holder that has been superseded. It is the zxid that
// created the holder's node. It is usually known without asking ZooKeeper;
// when it is not, the first call reads it within ctx.
func (m *Mutex) Token(ctx context.Context) (int64, error) {
	return token(ctx, m.key)
}

// Guard returns a check to put in a zk.Multi so that the transaction
// succeeds only while ctx still holds the mutex.
func (m *Mutex) Guard(ctx context.Context) (*zk.CheckVersionRequest, error) {
	return guard(ctx, m.key)
}

// Multi runs ops as one ZooKeeper transaction that succeeds only while ctx
// still holds the mutex. If the lock has been lost, nothing is applied and the
// error wraps ErrLockLost. The transaction is sent once and never retried.
func (m *Mutex) Multi(ctx context.Context, ops ...any) ([]zk.MultiResponse, error) {
	return guardedMulti(ctx, m.sess, m.key, ops)
}

// Revoked returns a channel that is closed when someone asks the holder of
// ctx to release the mutex (see Revoke). It returns nil, a channel that never
// fires, if ctx does not hold the mutex.
func (m *Mutex) Revoked(ctx context.Context) <-chan struct{} {
	return revoked(ctx, m.key)
}

// Participants lists the holder and then the waiters in the order they will
// be served, with each node's data. It works whether or not this process
// takes part.
func (m *Mutex) Participants(ctx context.Context) ([]Participant, error) {
	ps, _, err := participants(ctx, m.sess, m.spec.Dir, mutexLockName)
	return ps, err
}
