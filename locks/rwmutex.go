package locks

import (
	"context"
	"fmt"
	"slices"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/layout"
	"github.com/zkrecipes/recipes/internal/recipe"
	"github.com/zkrecipes/recipes/internal/seqnode"
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
// write lock: Lock with the Context of a read Hold (and of no write Hold)
// fails at once with ErrUpgrade, where Curator would wait forever.
//
// The methods mirror sync.RWMutex: Lock for writing, RLock for reading (each
// returns a Hold that releases itself), and RLocker for the read half as a
// Locker. An RWMutex is safe for concurrent use.
type RWMutex struct {
	sess     *recipes.Session
	at       args.Target
	readKey  holdKey
	writeKey holdKey
}

// NewRWMutex returns the read/write lock at path. Like NewMutex, it does no
// I/O and refuses bad input.
func NewRWMutex(sess *recipes.Session, path string, opts ...recipes.NodeOption) (*RWMutex, error) {
	at, err := recipe.Check(sess, path, opts)
	if err != nil {
		return nil, err
	}
	rw := &RWMutex{
		sess:     sess,
		at:       at,
		readKey:  holdKey{kind: "rw-read", sess: sess, path: path},
		writeKey: holdKey{kind: "rw-write", sess: sess, path: path},
	}
	// A downgrade creates its read node with its write node's sequence.
	read := rw.spec(readLockName, nil)
	read.Sequence = seqnode.LongestSequence
	if err := fits(sess, read, rw.spec(writeLockName, nil)); err != nil {
		return nil, err
	}
	return rw, nil
}

// Path returns the lock's path.
func (rw *RWMutex) Path() string { return rw.at.Path }

// zkPath is the lock's path in ZooKeeper, under the session's chroot.
func (rw *RWMutex) zkPath() string { return rw.at.Dir }

// spec is the engine's description of a read or a write node. A write
// hold holds as the lowest node, and only its own downgrade can put a node
// ahead of it later, so its release is marked as a Mutex's is (unless it
// downgraded), for a writer queued right behind it.
func (rw *RWMutex) spec(prefix string, holds seqnode.Predicate) seqnode.Spec {
	shape := seqnode.Read
	if prefix == writeLockName {
		shape = seqnode.Write
	}
	return seqnode.Spec{
		Dir:       rw.at.Dir,
		Prefix:    prefix,
		Siblings:  []string{readLockName, writeLockName},
		Data:      rw.at.Data,
		Shape:     shape,
		Predicate: holds,
		Refuse:    refuseOthers(rw.at.Dir, layout.RWLock),
	}
}

// Lock takes the write lock, waiting until every reader and writer queued
// before it is gone, and returns its Hold, as Mutex.Lock does.
func (rw *RWMutex) Lock(ctx context.Context) (*Hold, error) {
	if err := args.Context(ctx, "locks: RWMutex.Lock"); err != nil {
		return nil, err
	}
	h, _, err := rw.lock(ctx, waitTurn)
	return h, err
}

// TryLock takes the write lock if nobody holds or waits for either half now.
func (rw *RWMutex) TryLock(ctx context.Context) (*Hold, bool, error) {
	if err := args.Context(ctx, "locks: RWMutex.TryLock"); err != nil {
		return nil, false, err
	}
	return rw.lock(ctx, tryOnce)
}

func (rw *RWMutex) lock(ctx context.Context, w how) (*Hold, bool, error) {
	if !carriesLive(ctx, rw.writeKey) && carriesLive(ctx, rw.readKey) {
		return nil, false, fmt.Errorf("lock %s: %w", rw.at.Path, ErrUpgrade)
	}
	spec := rw.spec(writeLockName, seqnode.FirstN(1))
	// A downgrade can put a read node ahead of a queued writer, so a writer
	// cannot take its old listing's word that it is next (seqnode.Write);
	// but only a writer ahead can downgrade, so one behind readers alone
	// waits for them all and holds once they are gone.
	spec.WaitAll = readersAhead
	return acquire(ctx, rw.sess, rw.writeKey, rw.writeKey.what(), spec, w)
}

// RLock takes the read lock, waiting until every writer queued before it is
// gone, and returns its Hold.
//
// If ctx carries a Hold of the write lock, RLock takes the read lock at once
// at the write lock's place in the queue (a downgrade): release the write
// Hold afterwards and keep reading, with no writer able to slip in between.
// The read Hold is a hold of its own: its Context carries the write Hold's
// values but outlives it.
func (rw *RWMutex) RLock(ctx context.Context) (*Hold, error) {
	if err := args.Context(ctx, "locks: RWMutex.RLock"); err != nil {
		return nil, err
	}
	h, _, err := rw.rlock(ctx, waitTurn)
	return h, err
}

// TryRLock takes the read lock if no writer holds or waits for it now.
func (rw *RWMutex) TryRLock(ctx context.Context) (*Hold, bool, error) {
	if err := args.Context(ctx, "locks: RWMutex.TryRLock"); err != nil {
		return nil, false, err
	}
	return rw.rlock(ctx, tryOnce)
}

func (rw *RWMutex) rlock(ctx context.Context, w how) (*Hold, bool, error) {
	spec := rw.spec(readLockName, readHolds(""))
	spec.WaitAll = writersAhead("")
	// A downgrade, unless the write hold has ended or its release has
	// begun (then the read lock queues as any other). The write hold's
	// release will write no mark of its node: the read node is to hold on
	// at its place, and the writer behind must not take that release for
	// the end of the holds ahead of it.
	if wh := carrying(ctx, rw.writeKey); wh != nil && wh.Err() == nil && !carriesLive(ctx, rw.readKey) && wh.turn().Unmarked() {
		// Downgrade: our read node takes our write node's sequence, so it
		// sorts with it, ahead of every writer queued since.
		write := wh.turn()
		name := write.Name()
		spec.Sequence = seqnode.SequenceOf(name, writeLockName)
		spec.Predicate = readHolds(name)
		spec.WaitAll = writersAhead(name)
		spec.Token = write.Token()
		// Only while the write node is there: once it is gone (deleted by
		// hand, before the write hold noticed), its place in the queue is
		// no longer ours, and a writer queued behind it may hold already.
		refuse := spec.Refuse
		spec.Refuse = func(children []string) error {
			if !slices.Contains(children, name) {
				return fmt.Errorf("%w: downgrade: write node %s is gone", ErrLockLost, name)
			}
			return refuse(children)
		}
	}
	return acquire(ctx, rw.sess, rw.readKey, rw.readKey.what(), spec, w)
}

// readHolds is the reader's predicate: no writer queued ahead of it, except
// our own write node (ownWrite) when downgrading. It names the nearest
// writer ahead to watch, which a reader does only when more writers are
// ahead than it watches at once (writersAhead names them all).
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

// writersAhead is the reader's WaitAll: the writers queued ahead of it,
// but for our own write node (ownWrite) when downgrading. No writer can
// come ahead of a reader later, so once they are all gone it holds.
func writersAhead(ownWrite string) func([]seqnode.Node, int) []int {
	return func(nodes []seqnode.Node, ours int) []int {
		var ahead []int
		for i := ours - 1; i >= 0; i-- { // the nearest first: the one most likely to hold on
			if n := nodes[i]; n.Prefix == writeLockName && n.Name != ownWrite {
				ahead = append(ahead, i)
			}
		}
		return ahead
	}
}

// readersAhead is the writer's WaitAll: every node ahead of it, if all
// are readers. Only a writer ahead could put a node ahead of ours later
// (by downgrading), so once they are all gone it holds. With a writer ahead
// it waits as FirstN says, and reads the children again.
func readersAhead(nodes []seqnode.Node, ours int) []int {
	var ahead []int
	for i := ours - 1; i >= 0; i-- {
		if nodes[i].Prefix == writeLockName {
			return nil
		}
		ahead = append(ahead, i)
	}
	return ahead
}

// RLocker returns the read half as a Locker.
func (rw *RWMutex) RLocker() Locker { return readLocker{rw} }

type readLocker struct{ rw *RWMutex }

func (r readLocker) Lock(ctx context.Context) (*Hold, error) { return r.rw.RLock(ctx) }
func (r readLocker) Path() string                            { return r.rw.at.Path }
func (r readLocker) zkPath() string                          { return r.rw.at.Dir }

// Participants lists the readers and the writers (Kind KindRead or
// KindWrite), holders and waiters, in one queue order. The holders are the
// first writer, or every reader ahead of the first writer; a waiting writer
// waits for the node ahead of it, a waiting reader for the nearest writer
// ahead of it.
func (rw *RWMutex) Participants(ctx context.Context) ([]Participant, error) {
	if err := args.Context(ctx, "locks: RWMutex.Participants"); err != nil {
		return nil, err
	}
	return rwParticipants(ctx, rw.sess, rw.at.Dir)
}
