package locks

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/go-zookeeper/zk"
	"golang.org/x/sync/errgroup"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/layout"
	"github.com/zkrecipes/recipes/internal/seqnode"
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
// one fails with ErrMaxLeases. A Semaphore is safe for concurrent use.
type Semaphore struct {
	sess   *recipes.Session
	path   string
	max    int
	gate   *Mutex
	leases seqnode.Spec
	agreed atomic.Bool // the maximum matched the recorded one
}

// NewSemaphore returns the semaphore at path with maxLeases leases. Like
// NewMutex it does no I/O; it also refuses maxLeases < 1.
func NewSemaphore(sess *recipes.Session, path string, maxLeases int, opts ...Option) (*Semaphore, error) {
	cfg, err := validate(sess, path, opts)
	if err != nil {
		return nil, err
	}
	if maxLeases < 1 {
		return nil, fmt.Errorf("%w: a semaphore needs at least 1 lease, not %d", ErrInvalid, maxLeases)
	}
	gate, err := NewMutex(sess, zpath.Join(path, semaphoreGate), WithData(cfg.data))
	if err != nil {
		return nil, err
	}
	return &Semaphore{
		sess: sess,
		path: path,
		max:  maxLeases,
		gate: gate,
		leases: seqnode.Spec{
			Dir:    zpath.Join(path, semaphoreLeases),
			Prefix: leaseLockName,
			Data:   cfg.data,
			Holds:  seqnode.AtMost(maxLeases),
		},
	}, nil
}

// Path returns the semaphore's path.
func (s *Semaphore) Path() string { return s.path }

// MaxLeases returns the number of leases the semaphore hands out.
func (s *Semaphore) MaxLeases() int { return s.max }

// Acquire takes n leases, waiting until they are free or ctx ends. It takes
// all n or none: on any failure, the leases it took are released and no node
// is left behind. n must be between 1 and MaxLeases.
func (s *Semaphore) Acquire(ctx context.Context, n int) ([]*Lease, error) {
	leases, _, err := s.acquire(ctx, n, true)
	return leases, err
}

// TryAcquire takes n leases if they are free now and nobody is queued for
// the semaphore, and reports whether it did.
func (s *Semaphore) TryAcquire(ctx context.Context, n int) ([]*Lease, bool, error) {
	return s.acquire(ctx, n, false)
}

func (s *Semaphore) acquire(ctx context.Context, n int, wait bool) (leases []*Lease, ok bool, err error) {
	if n < 1 || n > s.max {
		return nil, false, fmt.Errorf("%w: cannot take %d leases of %s, which has %d", ErrInvalid, n, s.path, s.max)
	}
	gated, ok, err := s.gate.lock(ctx, wait)
	if err != nil || !ok {
		return nil, false, wrapSemaphore(s.path, err)
	}
	defer func() {
		if uerr := s.gate.Unlock(gated); uerr != nil && err == nil {
			// The leases are ours, but say that the gate misbehaved.
			err = wrapSemaphore(s.path, uerr)
		}
	}()
	// Our gate node is under the path now, so a recipe of another kind
	// that lists the path after us sees it, and refuses. Whether one came
	// before us is checked while the leases are taken, at no wait; but on
	// first use before agreeMax, which may write into the path's node.
	first := !s.agreed.Load()
	if first {
		if err := s.firstUse(gated); err != nil {
			return nil, false, wrapSemaphore(s.path, err)
		}
	}
	g, gctx := errgroup.WithContext(gated)
	if !first {
		g.Go(func() error { return s.checkLayout(gctx) })
	}
	g.Go(func() error {
		var err error
		leases, ok, err = s.takeLeases(gctx, n, wait)
		return err
	})
	if err := g.Wait(); err != nil {
		releaseAll(leases)
		return nil, false, wrapSemaphore(s.path, err)
	}
	return leases, ok, nil
}

// takeLeases takes n leases, or none; it runs under the gate.
func (s *Semaphore) takeLeases(ctx context.Context, n int, wait bool) ([]*Lease, bool, error) {
	var leases []*Lease
	for len(leases) < n {
		hold, ok, err := take(ctx, s.sess, s.leases, wait)
		if err != nil || !ok {
			releaseAll(leases)
			return nil, false, err
		}
		leases = append(leases, &Lease{hold: hold})
	}
	return leases, true, nil
}

// checkLayout refuses the path if another kind of recipe uses it.
func (s *Semaphore) checkLayout(ctx context.Context) error {
	var names []string
	err := s.sess.Retry(ctx, func(conn *zk.Conn) error {
		var err error
		names, _, err = conn.Children(s.path)
		return err
	})
	if err != nil {
		return fmt.Errorf("list %s: %w", s.path, err)
	}
	return layout.Check(s.path, names, layout.Semaphore, ErrOtherRecipe)
}

func wrapSemaphore(path string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("semaphore %s: %w", path, err)
}

// releaseAll gives back leases taken by an acquire that failed.
func releaseAll(leases []*Lease) {
	for _, l := range leases {
		_ = l.Release(context.Background())
	}
}

// firstUse checks the path's layout, then agrees on the maximum.
func (s *Semaphore) firstUse(ctx context.Context) error {
	if err := s.checkLayout(ctx); err != nil {
		return err
	}
	return s.agreeMax(ctx)
}

// agreeMax records the maximum in the path's node, or checks it against the
// one recorded there. It runs under the gate, which created the node.
func (s *Semaphore) agreeMax(ctx context.Context) error {
	want := []byte(maxLeasesPrefix + strconv.Itoa(s.max))
	err := s.sess.Retry(ctx, func(conn *zk.Conn) error {
		for {
			data, st, err := conn.Get(s.path)
			if err != nil {
				return err
			}
			if len(data) == 0 {
				_, err = conn.Set(s.path, want, st.Version)
				if errors.Is(err, zk.ErrBadVersion) {
					continue // someone else recorded one meanwhile
				}
				return err
			}
			recorded, found := strings.CutPrefix(string(data), maxLeasesPrefix)
			if found && recorded != strconv.Itoa(s.max) {
				return fmt.Errorf("%w: %s is in use with %s leases, this client says %d",
					ErrMaxLeases, s.path, recorded, s.max)
			}
			return nil // ours, or data not ours to judge
		}
	})
	if err != nil {
		return err
	}
	s.agreed.Store(true)
	return nil
}

// Participants lists the lease holders (and the one acquirer waiting at the
// gate, if any) in the order they were created.
func (s *Semaphore) Participants(ctx context.Context) ([]Participant, error) {
	ps, _, err := participants(ctx, s.sess, s.leases.Dir, leaseLockName)
	return ps, err
}

// A Lease is one of a Semaphore's leases. It can be released from any
// goroutine, and it reports its own loss.
type Lease struct {
	hold *seqnode.Hold
}

// Release gives the lease back, retrying across connection loss until
// ZooKeeper confirms. Releasing it again does nothing. If the lease was lost
// while held, Release returns an error wrapping ErrLockLost.
func (l *Lease) Release(ctx context.Context) error {
	if errors.Is(l.hold.Err(), ErrReleased) {
		return nil
	}
	if err := l.hold.Release(context.WithoutCancel(ctx)); err != nil && !errors.Is(err, ErrReleased) {
		return fmt.Errorf("release lease %s: %w", l.hold.Path(), err)
	}
	return nil
}

// Done is closed when the lease ends: lost or released.
func (l *Lease) Done() <-chan struct{} { return l.hold.Done() }

// Err is nil while the lease is held; then it wraps ErrLockLost, or is
// ErrReleased.
func (l *Lease) Err() error { return l.hold.Err() }

// Node returns the full path of the lease's node.
func (l *Lease) Node() string { return l.hold.Path() }

// Token returns the lease's fencing token (see Mutex.Token).
func (l *Lease) Token(ctx context.Context) (int64, error) { return l.hold.Token(), nil }

// Guard returns a check to put in a zk.Multi so that it succeeds only while
// the lease is held.
func (l *Lease) Guard() *zk.CheckVersionRequest { return l.hold.Guard() }
