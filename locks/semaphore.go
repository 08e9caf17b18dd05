package locks

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/layout"
	"github.com/zkrecipes/recipes/internal/recipe"
	"github.com/zkrecipes/recipes/internal/seqnode"
	"github.com/zkrecipes/recipes/internal/znode"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// The layout of Curator's InterProcessSemaphoreV2 under its path.
const (
	semaphoreGate   = layout.SemaphoreGate // a Mutex that one acquirer at a time holds while it waits
	semaphoreLeases = layout.SemaphoreDir  // one node per lease
	leaseLockName   = layout.LeaseLockName
	maxLeasesPrefix = "maxLeases="
)

// A Semaphore hands out at most a fixed number of leases on a path to all the
// processes that use it: Curator's InterProcessSemaphoreV2, on the same nodes,
// so Go and Java processes share the count.
//
// Acquirers queue first come, first served behind a gate (a Mutex under the
// path); only the one at the gate waits for a lease to come free, so a
// release wakes one waiter. Acquire takes all the leases it asks for while it
// holds the gate, so two acquirers that each want several can never hold part
// of their leases each and wait for each other.
//
// Every client must use the same maximum. The first Acquire of a Semaphore
// value records its maximum in the path's node (which Curator leaves empty)
// and checks it against one recorded there by another client: a different
// one fails with ErrMaxLeases while a lease is held or an acquirer is queued
// at the gate; a semaphore with neither takes the new maximum. A Semaphore
// is safe for concurrent use.
type Semaphore struct {
	sess   *recipes.Session
	at     args.Target
	max    int          // the fixed number of leases; 0 for a shared count
	count  string       // the shared count's path in ZooKeeper, or ""
	limit  atomic.Int64 // the number of leases in force: max, or the count as last read
	gate   seqnode.Spec // a Mutex that one acquirer at a time holds while it waits
	leases seqnode.Spec
	// agreed is the agreement on the maximum: the watch on the record
	// that matched it, or, for a shared count, a check that always stands.
	// Nil before the first agreement.
	agreed atomic.Pointer[layoutCheck]
}

// NewSemaphore returns the semaphore at path with maxLeases leases. Like
// NewMutex it does no I/O; it also refuses maxLeases < 1 or above
// math.MaxInt32 (Curator's limit: its maxLeases is a Java int).
func NewSemaphore(sess *recipes.Session, path string, maxLeases int, opts ...recipes.NodeOption) (*Semaphore, error) {
	at, err := recipe.Check(sess, path, opts, func() error {
		return args.Count(maxLeases, "a semaphore", "lease")
	})
	if err != nil {
		return nil, err
	}
	return checkedSemaphore(sess, at, maxLeases, "")
}

// newSemaphore makes a Semaphore of max leases, or, if max is 0, of as many
// as the shared count at countDir says.
func newSemaphore(sess *recipes.Session, at args.Target, max int, countDir string) *Semaphore {
	s := &Semaphore{
		sess:  sess,
		at:    at,
		max:   max,
		count: countDir,
		gate:  gateSpec(zpath.Join(at.Dir, semaphoreGate), at.Data),
	}
	s.gate.Top = at.Dir // the parents above the semaphore's path get the parent ACL
	s.limit.Store(int64(max))
	s.leases = seqnode.Spec{
		Dir:    zpath.Join(at.Dir, semaphoreLeases),
		Top:    at.Dir,
		Prefix: leaseLockName,
		Data:   at.Data,
		Shape:  seqnode.Lease,
		Predicate: func(nodes []seqnode.Node, ours int) (bool, int) {
			return seqnode.AtMost(int(s.limit.Load()))(nodes, ours)
		},
	}
	return s
}

// checkedSemaphore is newSemaphore, refusing a semaphore whose nodes ZooKeeper
// could not take (seqnode.Spec.Fits). Writing its maximum into its path is a
// smaller request than a lease's create.
func checkedSemaphore(sess *recipes.Session, at args.Target, max int, countDir string) (*Semaphore, error) {
	s := newSemaphore(sess, at, max, countDir)
	if err := fits(sess, s.gate, s.leases); err != nil {
		return nil, err
	}
	return s, nil
}

// Path returns the semaphore's path.
func (s *Semaphore) Path() string { return s.at.Path }

// MaxLeases returns the number of leases the semaphore hands out.
// For a shared count, it is the count as last read (0 before the first
// Acquire).
func (s *Semaphore) MaxLeases() int { return int(s.limit.Load()) }

// Acquire takes n leases, waiting until they are free or ctx ends, and
// returns a Hold for each: every lease is released on its own, from any
// goroutine. It takes all n or none: on any failure, the leases it took are
// released and no node is left behind. n must be between 1 and MaxLeases
// (for a shared count: the count when the acquirer reaches the gate, which
// is at most math.MaxInt32); another n is refused with an error wrapping
// recipes.ErrInvalid before anything is created.
//
// ctx bounds only the wait; each lease's Context carries its values. Leases
// are not reentrant: an Acquire with a lease's Context takes new ones.
func (s *Semaphore) Acquire(ctx context.Context, n int) ([]*Hold, error) {
	if err := args.Context(ctx, "locks: Semaphore.Acquire"); err != nil {
		return nil, err
	}
	leases, _, err := s.acquire(ctx, n, waitTurn)
	return leases, err
}

// TryAcquire takes n leases if they are free now and nobody is queued for
// the semaphore, and reports whether it did.
func (s *Semaphore) TryAcquire(ctx context.Context, n int) ([]*Hold, bool, error) {
	if err := args.Context(ctx, "locks: Semaphore.TryAcquire"); err != nil {
		return nil, false, err
	}
	return s.acquire(ctx, n, tryOnce)
}

func (s *Semaphore) acquire(ctx context.Context, n int, w how) ([]*Hold, bool, error) {
	start := time.Now()
	nodes, ok, err := s.take(ctx, n, w)
	znode.Of(s.sess).Recorder().Acquisition(ctx, "semaphore", s.at.Path, start, ok, err)
	if err != nil || !ok {
		return nil, false, err
	}
	leases := make([]*Hold, len(nodes))
	for i, node := range nodes {
		leases[i] = newHold(ctx, nil, s.at.Path, s.sess, node)
	}
	return leases, true, nil
}

func wrapSemaphore(path string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("semaphore %s: %w", path, err)
}

// Participants lists the leases in the order they were created (the first
// MaxLeases hold; a newer one is the acquirer waiting for a lease), then the
// acquirers at the gate, by their gate nodes: the one holding the gate if it
// has not created its lease yet, then those queued behind it, the first
// waiting for the lease (or gate node) of the one holding the gate, each
// other for the gate node ahead of it. All have Kind KindLease.
func (s *Semaphore) Participants(ctx context.Context) ([]Participant, error) {
	if err := args.Context(ctx, "locks: Semaphore.Participants"); err != nil {
		return nil, err
	}
	return semaphoreParticipants(ctx, s.sess, s.at.Dir, s.MaxLeases())
}
