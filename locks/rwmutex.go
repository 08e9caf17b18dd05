package locks

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/layout"
	"github.com/zkrecipes/recipes/internal/seqnode"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// The lock names of Curator's InterProcessReadWriteLock nodes. Both halves
// queue in one directory, in one order.
const (
	readLockName  = layout.ReadLockName
	writeLockName = layout.WriteLockName
)

// An RWMutex is a read/write lock shared by every process that uses the same
// path: Curator's InterProcessReadWriteLock, on the same nodes. Any number of
// readers may hold it at once, or one writer. Readers and writers are served
// in the order they queued, so a stream of new readers cannot starve a writer
// that is waiting.
//
// Both halves are reentrant along a call chain, like Mutex. A writer may also
// take the read lock (a downgrade: release the write lock afterwards and keep
// reading, with no writer able to slip in between). A reader cannot take the
// write lock: Lock with a context that holds only the read lock fails at once
// with ErrUpgrade, where Curator would wait forever.
//
// The methods mirror sync.RWMutex: Lock/Unlock for writing, RLock/RUnlock for
// reading, and RLocker for the read half as a Locker. An RWMutex is safe for
// concurrent use.
type RWMutex struct {
	sess     *recipes.Session
	path     string
	data     []byte
	readKey  holdKey
	writeKey holdKey
}

// NewRWMutex returns the read/write lock at path. Like NewMutex, it does no
// I/O and refuses bad input.
func NewRWMutex(sess *recipes.Session, path string, opts ...Option) (*RWMutex, error) {
	cfg, err := validate(sess, path, opts)
	if err != nil {
		return nil, err
	}
	return &RWMutex{
		sess:     sess,
		path:     path,
		data:     cfg.data,
		readKey:  holdKey{kind: "rw-read", sess: sess, path: path},
		writeKey: holdKey{kind: "rw-write", sess: sess, path: path},
	}, nil
}

// Path returns the lock's path.
func (rw *RWMutex) Path() string { return rw.path }

func (rw *RWMutex) spec(prefix string, holds seqnode.Predicate) seqnode.Spec {
	return seqnode.Spec{
		Dir:      rw.path,
		Prefix:   prefix,
		Siblings: []string{readLockName, writeLockName},
		Data:     rw.data,
		Holds:    holds,
		Refuse:   refuseOthers(rw.path, layout.RWLock),
	}
}

// Lock takes the write lock, waiting until every reader and writer queued
// before it is gone. It returns the context that holds it, as Mutex.Lock does.
func (rw *RWMutex) Lock(ctx context.Context) (context.Context, error) {
	held, _, err := rw.lock(ctx, true)
	return held, err
}

// TryLock takes the write lock if nobody holds or waits for either half now.
func (rw *RWMutex) TryLock(ctx context.Context) (context.Context, bool, error) {
	return rw.lock(ctx, false)
}

func (rw *RWMutex) lock(ctx context.Context, wait bool) (context.Context, bool, error) {
	if !holds(ctx, rw.writeKey) && holds(ctx, rw.readKey) {
		return nil, false, fmt.Errorf("lock %s: %w", rw.path, ErrUpgrade)
	}
	spec := rw.spec(writeLockName, seqnode.FirstN(1))
	// A downgrade can put a read node ahead of a queued writer, so a writer
	// cannot take its old listing's word that it is next.
	spec.Relist = true
	return acquire(ctx, nil, rw.sess, rw.writeKey, spec, wait)
}

// Unlock releases the write lock held by ctx, as Mutex.Unlock does.
func (rw *RWMutex) Unlock(ctx context.Context) error {
	return release(ctx, rw.writeKey)
}

// RLock takes the read lock, waiting until every writer queued before it is
// gone. If ctx holds the write lock, RLock takes the read lock at once at the
// write lock's place in the queue (a downgrade).
func (rw *RWMutex) RLock(ctx context.Context) (context.Context, error) {
	held, _, err := rw.rlock(ctx, true)
	return held, err
}

// TryRLock takes the read lock if no writer holds or waits for it now.
func (rw *RWMutex) TryRLock(ctx context.Context) (context.Context, bool, error) {
	return rw.rlock(ctx, false)
}

func (rw *RWMutex) rlock(ctx context.Context, wait bool) (context.Context, bool, error) {
	spec := rw.spec(readLockName, readHolds(""))
	var src context.Context
	if w, err := active(ctx, rw.writeKey); err == nil && !holds(ctx, rw.readKey) {
		// Downgrade: our read node takes our write node's sequence, so it
		// sorts with it, ahead of every writer queued since. Its context
		// must outlive the write lock's.
		name := zpath.Base(w.Path())
		spec.Sequence = name[strings.LastIndex(name, writeLockName)+len(writeLockName):]
		spec.Holds = readHolds(name)
		src = lookup(ctx, rw.writeKey).src
	}
	return acquire(ctx, src, rw.sess, rw.readKey, spec, wait)
}

// RUnlock releases the read lock held by ctx, as Mutex.Unlock does.
func (rw *RWMutex) RUnlock(ctx context.Context) error {
	return release(ctx, rw.readKey)
}

// readHolds is the reader's predicate: no writer queued ahead of it, except
// our own write node (ownWrite) when downgrading. A waiting reader watches
// the nearest writer ahead: once that one is gone, no writer ahead of it
// can still be.
func readHolds(ownWrite string) seqnode.Predicate {
	return func(nodes []seqnode.Node, ours int) (bool, int) {
		nearest := -1
		for i, n := range nodes[:ours] {
			if n.Prefix == writeLockName && n.Name != ownWrite {
				nearest = i
			}
		}
		return nearest < 0, nearest
	}
}

// RLocker returns the read half as a Locker.
func (rw *RWMutex) RLocker() Locker { return readLocker{rw} }

type readLocker struct{ rw *RWMutex }

func (r readLocker) Lock(ctx context.Context) (context.Context, error) { return r.rw.RLock(ctx) }
func (r readLocker) Unlock(ctx context.Context) error                  { return r.rw.RUnlock(ctx) }
func (r readLocker) Path() string                                      { return r.rw.path }

// heldKey returns the key of the half ctx holds: the write half if it holds
// both (after a downgrade, until it releases the write lock).
func (rw *RWMutex) heldKey(ctx context.Context) holdKey {
	if lookup(ctx, rw.writeKey) != nil {
		return rw.writeKey
	}
	return rw.readKey
}

// Token returns the fencing token of the hold ctx carries (of the write lock
// if it holds both); see Mutex.Token.
func (rw *RWMutex) Token(ctx context.Context) (int64, error) {
	return token(ctx, rw.heldKey(ctx))
}

// Guard returns a Multi check on the hold ctx carries; see Mutex.Guard.
func (rw *RWMutex) Guard(ctx context.Context) (*zk.CheckVersionRequest, error) {
	return guard(ctx, rw.heldKey(ctx))
}

// Multi runs ops as one transaction that succeeds only while ctx still holds
// its half of the lock; see Mutex.Multi.
func (rw *RWMutex) Multi(ctx context.Context, ops ...any) ([]zk.MultiResponse, error) {
	return guardedMulti(ctx, rw.sess, rw.heldKey(ctx), ops)
}

// Revoked returns the revocation channel of the hold ctx carries; see
// Mutex.Revoked.
func (rw *RWMutex) Revoked(ctx context.Context) <-chan struct{} {
	return revoked(ctx, rw.heldKey(ctx))
}

// Participants lists the readers and the writers, holders and waiters, each
// in queue order.
func (rw *RWMutex) Participants(ctx context.Context) (readers, writers []Participant, err error) {
	all, kinds, err := participants(ctx, rw.sess, rw.path, readLockName, writeLockName)
	if err != nil {
		return nil, nil, err
	}
	for i, p := range all {
		switch kinds[i] {
		case readLockName:
			readers = append(readers, p)
		case writeLockName:
			writers = append(writers, p)
		}
	}
	return readers, writers, nil
}
