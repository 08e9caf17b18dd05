package locks

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/args"
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
// it does no I/O; Acquire fails if the count node does not exist.
func NewSharedCountSemaphore(sess *recipes.Session, path, countPath string, opts ...recipes.NodeOption) (*Semaphore, error) {
	data, err := args.Check(sess, path, opts, ErrInvalid)
	if err == nil {
		err = args.Where(sess, countPath, ErrInvalid)
	}
	if err != nil {
		return nil, err
	}
	return newSemaphore(sess, path, 0, zpath.Under(sess.Chroot(), countPath), data), nil
}

// SetSharedCount sets the shared count at countPath to n, creating the node
// (and missing parents, as containers) if it does not exist.
func SetSharedCount(ctx context.Context, sess *recipes.Session, countPath string, n int) error {
	if err := args.Where(sess, countPath, ErrInvalid); err != nil {
		return err
	}
	if n < -1<<31 || n > 1<<31-1 {
		return fmt.Errorf("%w: shared count %d does not fit in 32 bits", ErrInvalid, n)
	}
	full := zpath.Under(sess.Chroot(), countPath)
	value := binary.BigEndian.AppendUint32(nil, uint32(int32(n)))
	err := sess.Retry(ctx, func(conn *zk.Conn) error {
		_, err := conn.Set(full, value, -1)
		if !errors.Is(err, zk.ErrNoNode) {
			return err
		}
		_, err = znode.Create(conn, full, zk.FlagPersistent, value, sess.ACL())
		if errors.Is(err, zk.ErrNodeExists) {
			_, err = conn.Set(full, value, -1)
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
// the gate: a fixed semaphore's, or, for a shared count, one whose waiter
// also wakes when the count changes (read now, and watched until ctx ends).
func (s *Semaphore) leaseSpec(ctx context.Context, n int) (seqnode.Spec, error) {
	if s.count == "" {
		return s.leases, nil
	}
	w := &countWatch{sess: s.sess, path: s.count, limit: &s.limit}
	if err := w.read(ctx); err != nil {
		return seqnode.Spec{}, err
	}
	if max := s.MaxLeases(); n > max && max >= 1 {
		return seqnode.Spec{}, fmt.Errorf("%w: cannot take %d leases of %s, whose count is %d", ErrInvalid, n, s.path, max)
	}
	go w.follow(ctx)
	spec := s.leases
	spec.Wake = w.changed
	return spec, nil
}

// A countWatch keeps a semaphore's limit up to date with its shared count
// for one acquisition.
type countWatch struct {
	sess  *recipes.Session
	path  string
	limit interface{ Store(int64) }

	mu     sync.Mutex
	events <-chan zk.Event
	next   chan struct{} // closed when the count was read again after a change
}

// read reads the count, stores it and watches it.
func (w *countWatch) read(ctx context.Context) error {
	data, _, events, err := znode.GetW(ctx, w.sess, w.path)
	if errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("%w: shared count %s does not exist (SetSharedCount, or Curator's SharedCount, makes it)", err, w.path)
	}
	if err != nil {
		return fmt.Errorf("read shared count %s: %w", w.path, err)
	}
	n, err := decodeCount(w.path, data)
	if err != nil {
		return err
	}
	w.limit.Store(n)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events = events
	if w.next == nil {
		w.next = make(chan struct{})
	}
	return nil
}

// changed returns a channel closed at the next change of the count, once the
// new count is stored.
func (w *countWatch) changed() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.next
}

// follow reads the count again at each change until ctx ends.
func (w *countWatch) follow(ctx context.Context) {
	for {
		w.mu.Lock()
		events := w.events
		w.mu.Unlock()
		if err := znode.WaitEvent(ctx, w.sess, events); err != nil {
			return
		}
		if err := w.read(ctx); err != nil {
			return
		}
		w.mu.Lock()
		close(w.next)
		w.next = make(chan struct{})
		w.mu.Unlock()
	}
}
