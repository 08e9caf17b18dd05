package locks

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/jute"
	"github.com/zkrecipes/recipes/internal/recipe"
	"github.com/zkrecipes/recipes/internal/seqnode"
	"github.com/zkrecipes/recipes/internal/znode"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// NewSharedCountSemaphore returns the semaphore at path whose number of
// leases is the shared count at countPath, which may change while it is in
// use: Curator's InterProcessSemaphoreV2 with a SharedCountReader, on the
// same nodes, so Go and Java acquirers share one count. The count node holds
// a 4-byte big-endian integer (Curator's SharedCount); set it with
// SetSharedCount or Curator's SharedCount.setCount.
//
// An acquirer reads the count when it reaches the front of the queue and
// watches it while it waits: raising the count lets it in at once, lowering
// it lets no new holder in until enough leases are released (holders keep
// theirs, as in Curator). A count below 1 lets nobody in. Like NewSemaphore
// it does no I/O; Acquire fails if the count node does not exist, with an
// error wrapping ErrNoSharedCount.
func NewSharedCountSemaphore(sess *recipes.Session, path, countPath string, opts ...recipes.NodeOption) (*Semaphore, error) {
	at, err := recipe.Check(sess, path, opts, func() error {
		return recipe.Where(sess, countPath)
	}, func() error {
		if countPath == path || strings.HasPrefix(countPath, path+"/") {
			return fmt.Errorf("%w: the shared count %s is inside the semaphore's path %s", recipes.ErrInvalid, countPath, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return checkedSemaphore(sess, at, 0, zpath.Under(sess.Chroot(), countPath))
}

// SetSharedCount sets the shared count at countPath to n, creating the node
// (and missing parents, as containers) if it does not exist. A node there
// that holds anything but a count (or nothing) is left alone: the error
// wraps recipes.ErrInvalid.
func SetSharedCount(ctx context.Context, sess *recipes.Session, countPath string, n int) error {
	if err := args.Context(ctx, "locks: SetSharedCount"); err != nil {
		return err
	}
	if err := recipe.Where(sess, countPath); err != nil {
		return err
	}
	if n < -1<<31 || n > 1<<31-1 {
		return fmt.Errorf("%w: shared count %d does not fit in 32 bits", recipes.ErrInvalid, n)
	}
	full := zpath.Under(sess.Chroot(), countPath)
	value := binary.BigEndian.AppendUint32(nil, uint32(int32(n)))
	if err := args.Fits("the create of shared count "+args.Short(full), jute.Create(full, len(value), sess.ACL())); err != nil {
		return err
	}
	err := sess.Retry(ctx, func(conn *zk.Conn) error {
		data, st, err := conn.Get(full)
		switch {
		case err == nil && len(data) != 0 && len(data) != 4:
			return fmt.Errorf("%w: %s holds %d bytes, not a shared count", recipes.ErrInvalid, countPath, len(data))
		case err == nil:
			_, err = znode.Set(conn, full, value, st.Version)
			return err // a concurrent change: ZooKeeper's bad version, not retried
		case !errors.Is(err, zk.ErrNoNode):
			return znode.RefusedRead(err, full)
		}
		_, err = znode.Create(sess, conn, full, zk.FlagPersistent, value, full)
		if errors.Is(err, zk.ErrNodeExists) {
			_, err = znode.Set(conn, full, value, -1)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("set shared count %s: %w", countPath, err)
	}
	return nil
}

// decodeCount reads a shared count node's data.
func decodeCount(path string, data []byte) (int64, error) {
	if len(data) != 4 {
		return 0, fmt.Errorf("%s holds %d bytes, not a shared count (4)", path, len(data))
	}
	return int64(int32(binary.BigEndian.Uint32(data))), nil
}

// leaseSpec returns the lease spec for an acquisition of n leases that holds
// the gate: a fixed semaphore's, or, for a shared count, one that reads the
// count now and, if the acquirer has to wait, watches it (Spec.Wake) so that
// a change wakes the waiter. stop ends the watch and waits for it; call it
// once the leases are taken or given up.
func (s *Semaphore) leaseSpec(ctx context.Context, n int) (spec seqnode.Spec, stop func(), err error) {
	if s.count == "" {
		return s.leases, func() {}, nil
	}
	w := &countWatch{sess: s.sess, path: s.count, report: &s.limit, next: make(chan struct{})}
	data, _, err := znode.Get(ctx, s.sess, s.count)
	if err == nil {
		err = w.store(data)
	}
	if err != nil {
		return seqnode.Spec{}, nil, w.explain(err)
	}
	if max := w.limit.Load(); n > int(max) && max >= 1 {
		return seqnode.Spec{}, nil, fmt.Errorf("%w: cannot take %d leases of %s, whose count is %d", recipes.ErrInvalid, n, s.at.Path, max)
	}
	wctx, cancel := context.WithCancel(ctx)
	w.ctx = wctx
	spec = s.leases
	spec.Predicate = func(nodes []seqnode.Node, ours int) (bool, int) {
		return seqnode.AtMost(int(w.limit.Load()))(nodes, ours)
	}
	spec.Wake = w.wake
	return spec, func() { cancel(); w.wg.Wait() }, nil
}

// A countWatch follows a semaphore's shared count for one acquisition, and
// so for one waiter: the limit its lease predicate reads.
type countWatch struct {
	sess   *recipes.Session
	path   string
	ctx    context.Context // ends the watch
	limit  atomic.Int64
	report *atomic.Int64 // the Semaphore's, for MaxLeases
	wg     sync.WaitGroup

	mu      sync.Mutex
	armed   bool          // the count is watched, by follow
	changed bool          // the count changed since the last wake
	next    chan struct{} // closed when the count changes
	err     error         // why following the count stopped
}

// store decodes the count and makes it the limit; it reports whether it
// changed.
func (w *countWatch) store(data []byte) error {
	n, err := decodeCount(w.path, data)
	if err != nil {
		return err
	}
	if w.limit.Swap(n) != n {
		w.mu.Lock()
		w.changed = true
		w.mu.Unlock()
	}
	w.report.Store(n)
	return nil
}

func (w *countWatch) explain(err error) error {
	if errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("%w: %s (SetSharedCount, or Curator's SharedCount, makes it): %w", ErrNoSharedCount, w.path, err)
	}
	return fmt.Errorf("read shared count %s: %w", w.path, err)
}

// wake is the lease spec's Wake: the waiter calls it each time it is about
// to wait. The first call starts watching the count (an acquirer that never
// waits leaves no watch behind). The channel is closed at once if the count
// changed since the previous call (or since the listing the waiter judged
// by), so no change is missed between a listing and the wait.
func (w *countWatch) wake() (<-chan struct{}, error) {
	w.mu.Lock()
	armed := w.armed
	w.armed = true
	w.mu.Unlock()
	if !armed {
		data, _, events, err := znode.GetW(w.ctx, w.sess, w.path)
		if err == nil {
			err = w.store(data)
		}
		if err != nil {
			return nil, w.explain(err)
		}
		w.wg.Go(func() { w.follow(events) })
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return nil, w.err
	}
	if w.changed {
		w.changed = false
		closed := make(chan struct{})
		close(closed)
		return closed, nil
	}
	return w.next, nil
}

// follow reads the count again at each change until the watch ends.
func (w *countWatch) follow(events <-chan zk.Event) {
	for {
		if err := znode.WaitEvent(w.ctx, w.sess, events); err != nil {
			w.stop(err)
			return
		}
		data, _, ev, err := znode.GetW(w.ctx, w.sess, w.path)
		if err == nil {
			err = w.store(data)
		}
		if err != nil {
			w.stop(w.explain(err))
			return
		}
		events = ev
		w.mu.Lock()
		close(w.next)
		w.next = make(chan struct{})
		w.mu.Unlock()
	}
}

// stop records why following ended and wakes the waiter, which then gets
// the error from wake.
func (w *countWatch) stop(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.err = err
	close(w.next)
	w.next = make(chan struct{})
}
