package locks

import (
	"context"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/layout"
	"github.com/zkrecipes/recipes/internal/recipe"
	"github.com/zkrecipes/recipes/internal/seqnode"
)

// A Mutex is a reentrant lock shared by every process that uses the same
// path: Curator's InterProcessMutex, on the same nodes, so Go and Java
// processes exclude each other. See the package documentation for ownership,
// loss, fencing and cancellation.
//
// A Mutex holds no state of its own beyond its configuration; it is safe for
// concurrent use, and any number of goroutines may share one value. The
// goroutines of one session waiting for one path (through one Mutex value or
// several) queue in the process, in the order they called Lock, with at most
// two of them in ZooKeeper at a time: the holder and the next in line. Each
// takes its turn at the back of the ZooKeeper queue, so other processes are
// not starved (docs/semantics.md, "Many goroutines, one session").
type Mutex struct {
	sess *recipes.Session
	spec seqnode.Spec
	key  holdKey
	what string // what its errors say it does: "lock PATH", or "campaign PATH"
}

// mutexLockName is the lock name of Curator's InterProcessMutex nodes.
const mutexLockName = layout.MutexLockName

// NewMutex returns the mutex at path. It does no I/O: the path's nodes are
// created when the lock is first taken. It fails, creating nothing, if sess is
// nil, path is not a valid absolute ZooKeeper path, or the data is too large:
// over recipes.MaxDataSize, or, with the path, the session's chroot and ACL,
// too large for a request ZooKeeper takes (docs/semantics.md, "Bad input").
func NewMutex(sess *recipes.Session, path string, opts ...recipes.NodeOption) (*Mutex, error) {
	at, err := recipe.Check(sess, path, opts)
	if err != nil {
		return nil, err
	}
	m := &Mutex{sess: sess, key: holdKey{kind: "mutex", sess: sess, path: path}, what: "lock " + path}
	lockName, own := mutexLockName, layout.Mutex
	switch at.Role {
	case args.RoleSelector:
		m.what = "campaign " + path
	case args.RoleLatch:
		lockName, own = layout.LatchLockName, layout.Latch
		m.key.kind, m.what = "latch", "campaign "+path
	}
	m.spec = exclusiveSpec(at.Dir, lockName, own, at.Data)
	if err := fits(sess, m.spec); err != nil {
		return nil, err
	}
	return m, nil
}

// mutexSpec describes a Mutex's node; a Semaphore's gate is one too.
func mutexSpec(path string, data []byte) seqnode.Spec {
	return exclusiveSpec(path, mutexLockName, layout.Mutex, data)
}

// exclusiveSpec describes the node of a lock that one node at a time holds,
// whose lock name is lockName in the layout own: a Mutex's, or an election
// latch's.
func exclusiveSpec(path, lockName string, own layout.Kind, data []byte) seqnode.Spec {
	return seqnode.Spec{Dir: path, Prefix: lockName, Data: data, Shape: seqnode.Exclusive, Predicate: seqnode.FirstN(1), Refuse: refuseOthers(path, own)}
}

// fits checks that every request the engine makes for specs is one ZooKeeper
// takes.
func fits(sess *recipes.Session, specs ...seqnode.Spec) error {
	for _, s := range specs {
		if err := s.Fits(sess.ACL()); err != nil {
			return err
		}
	}
	return nil
}

// refuseOthers returns the engine's check that no other recipe uses path.
func refuseOthers(path string, own layout.Kind) func([]string) error {
	return func(children []string) error {
		return layout.Check(path, children, own)
	}
}

// Path returns the mutex's path.
func (m *Mutex) Path() string { return m.key.path }

// zkPath is the mutex's path in ZooKeeper, under the session's chroot.
func (m *Mutex) zkPath() string { return m.spec.Dir }

// Lock blocks until the mutex is held, and returns the Hold.
//
// If ctx carries a Hold of this mutex (it is that Hold's Context, or derived
// from it), Lock re-enters at once, with no ZooKeeper request, and returns
// that Hold; each Lock needs its own Release. Otherwise Lock queues behind
// the current holder and waiters (first come, first served).
//
// ctx bounds only the wait: the Hold outlives its deadline. If ctx ends or an
// error occurs while waiting, Lock returns the error and leaves no node
// behind. If ctx has already ended, Lock returns its cause at once: it sends
// no request, and does not re-enter either.
func (m *Mutex) Lock(ctx context.Context) (*Hold, error) {
	if err := args.Context(ctx, "locks: Mutex.Lock"); err != nil {
		return nil, err
	}
	h, _, err := acquire(ctx, m.sess, m.key, m.what, m.spec, waitTurn)
	return h, err
}

// TryLock takes the mutex if it is free now, and reports whether it did. It
// never waits for another holder. It talks to ZooKeeper, within ctx, unless
// other goroutines of this session are waiting for the mutex already: then
// it is not free, and TryLock returns false at once.
// When it returns false it leaves no node behind. A ctx that carries a Hold
// of the mutex re-enters, as with Lock.
func (m *Mutex) TryLock(ctx context.Context) (*Hold, bool, error) {
	if err := args.Context(ctx, "locks: Mutex.TryLock"); err != nil {
		return nil, false, err
	}
	return acquire(ctx, m.sess, m.key, m.what, m.spec, tryOnce)
}

// Participants lists the holder and then the waiters in the order they will
// be served, with each node's data; each waiter waits for the node ahead of
// it. It works whether or not this process takes part.
func (m *Mutex) Participants(ctx context.Context) ([]Participant, error) {
	if err := args.Context(ctx, "locks: Mutex.Participants"); err != nil {
		return nil, err
	}
	return mutexParticipants(ctx, m.sess, m.spec.Dir)
}
