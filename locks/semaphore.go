package locks

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-zookeeper/zk"

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
		Holds: func(nodes []seqnode.Node, ours int) (bool, int) {
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

// gateSpec describes the gate: a Mutex's node, whose hold only the
// semaphore uses, so it needs no token and no watch of its own (a gate
// deleted by someone else lets a second acquirer wait for leases too, which
// the lease rule keeps safe). Its releases are marked as a Mutex's are; a
// waiter behind others watches its own node while it waits, to trust a
// mark.
func gateSpec(path string, data []byte) seqnode.Spec {
	spec := mutexSpec(path, data)
	spec.Bare = true
	return spec
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
	nodes, ok, err := measured(ctx, s.sess, "semaphore", s.at.Path, func() ([]*seqnode.Hold, bool, error) { return s.take(ctx, n, w) })
	if err != nil || !ok {
		return nil, false, err
	}
	leases := make([]*Hold, len(nodes))
	for i, node := range nodes {
		leases[i] = newHold(ctx, nil, s.at.Path, s.sess, node)
	}
	return leases, true, nil
}

// take takes n lease nodes, or none, while holding the gate.
func (s *Semaphore) take(ctx context.Context, n int, w how) ([]*seqnode.Hold, bool, error) {
	switch {
	case s.count == "" && (n < 1 || n > s.max):
		return nil, false, fmt.Errorf("%w: cannot take %d leases of %s, which has %d", recipes.ErrInvalid, n, s.at.Path, s.max)
	case n < 1:
		return nil, false, fmt.Errorf("%w: cannot take %d leases of %s", recipes.ErrInvalid, n, s.at.Path)
	case n > args.MaxCount: // more than a shared count can say
		return nil, false, fmt.Errorf("%w: cannot take %d leases of %s, which has at most %d (Curator's limit, a Java int)", recipes.ErrInvalid, n, s.at.Path, args.MaxCount)
	}
	if err := znode.CtxErr(ctx); err != nil {
		return nil, false, wrapSemaphore(s.at.Path, err)
	}
	ctx = seqnode.OneAcquisition(ctx) // it may wait at the gate, then for leases
	gate, ok, err := w.take(ctx, s.sess, s.gate)
	if err != nil || !ok {
		return nil, false, wrapSemaphore(s.at.Path, err)
	}
	nodes, ok, err := s.takeGated(ctx, gate, n, w)
	if err != nil {
		release, stop := context.WithTimeout(context.WithoutCancel(ctx), s.sess.Timeout())
		defer stop()
		_ = gate.Release(release)
		if errors.Is(err, recipes.ErrOtherRecipe) {
			s.removeEmptyDirs(release)
		}
		return nil, false, wrapSemaphore(s.at.Path, err)
	}
	// A lease's directory changes whenever another lease is taken or given
	// back, which would have the lease read its node then, in a round trip
	// of its own: it reads it now, in the gate delete's.
	s.leaveGate(ctx, gate, func() {
		for _, node := range nodes {
			node.WatchNode()
		}
	})
	return nodes, ok, nil
}

// takeGated takes the leases while gate is held: losing it ends the wait.
// Whether another kind of recipe came to the path before us is checked
// beside them, at no wait: our gate node is under the path now, so one
// that lists the path after us sees it, and refuses. On first use the path
// is checked first, as agreeMax may write into the path's node. The
// maximum is agreed again whenever the path's children changed since this
// session's last check (its kept watch fired): the path's node, which
// records the maximum, is a container, which ZooKeeper reaps, record and
// all, when the semaphore has been idle; and whenever the record changed
// (its watch fired): an idle semaphore takes the maximum of the next
// client. What takeGated took it gives back if it fails.
func (s *Semaphore) takeGated(ctx context.Context, gate *seqnode.Hold, n int, w how) ([]*seqnode.Hold, bool, error) {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	gate.OnEnd(stop)
	standing, _ := layoutsOf(s.sess).verdict(s.sess, s.at.Dir)
	agreed := s.stillAgreed() && standing
	if !agreed {
		if err := s.firstUse(ctx); err != nil {
			return nil, false, err
		}
	}
	// Else the check runs beside the leases; a refusal stops them.
	check := make(chan error, 1)
	if agreed {
		go func() {
			err := s.checkLayout(ctx)
			if err != nil {
				stop(err)
			}
			check <- err
		}()
	} else {
		check <- nil
	}
	nodes, ok, err := s.takeLeases(ctx, n, w)
	if err != nil {
		stop(err) // ends the check
	}
	// The first failure is the one to report: a refusal that stopped the
	// leases, not the leases' cancellation.
	if cerr := <-check; cerr != nil && (err == nil || errors.Is(context.Cause(ctx), cerr)) {
		err = cerr
	}
	if err != nil {
		releaseNodes(nodes)
		return nil, false, err
	}
	return nodes, ok, nil
}

// leaveGate deletes the gate node of an acquisition that got its leases
// (or found them busy) without waiting for ZooKeeper's answer, where the
// session shows what it writes (znode.SentOf): it returns once the delete
// is being written, so that every later request of the session, the next
// acquisition's gate included, goes out after it and is served after it.
// The lease's release then shares the delete's round trip. Elsewhere it
// waits for the answer. Either way it calls beside, whose requests go out
// with the delete.
func (s *Semaphore) leaveGate(ctx context.Context, gate *seqnode.Hold, beside func()) {
	release := func() {
		rctx, stop := context.WithTimeout(context.WithoutCancel(ctx), s.sess.Timeout())
		defer stop()
		_ = gate.Release(rctx)
	}
	sent := znode.SentOf(s.sess)
	if sent == nil {
		beside()
		release()
		return
	}
	written, stop := sent.Wait(gate.Path())
	defer stop()
	released := make(chan struct{})
	if !s.sess.Go(func() { defer close(released); release() }) {
		release() // the session has ended: the node has gone with it
		return
	}
	select {
	case <-written:
	case <-released:
	}
	beside()
}

// removeEmptyDirs deletes the gate's and the leases' directories under the
// path if they are empty, as ZooKeeper's reaping of containers would later:
// a semaphore refused for another recipe's path leaves nothing behind, not
// even the containers its gate made, which would have that recipe refuse its
// own path until they are reaped (a minute, by default).
func (s *Semaphore) removeEmptyDirs(ctx context.Context) {
	for _, dir := range []string{s.leases.Dir, s.gate.Dir} {
		_ = s.sess.Retry(ctx, func(conn *zk.Conn) error {
			err := znode.Delete(conn, dir)
			if errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrNotEmpty) {
				return nil
			}
			return err
		})
	}
}

// takeLeases takes n leases, or none; it runs under the gate.
func (s *Semaphore) takeLeases(ctx context.Context, n int, w how) ([]*seqnode.Hold, bool, error) {
	spec, stop, err := s.leaseSpec(ctx, n)
	if err != nil {
		return nil, false, err
	}
	defer stop()
	var nodes []*seqnode.Hold
	for len(nodes) < n {
		node, ok, err := w.take(ctx, s.sess, spec)
		if err != nil || !ok {
			releaseNodes(nodes)
			return nil, false, err
		}
		nodes = append(nodes, node)
	}
	return nodes, true, nil
}

// checkLayout refuses the path if another kind of recipe uses it. The
// listing leaves a watch on the path's children, shared by every Semaphore
// of the session on that path: until it fires, and while the session has
// lost no connection (after a reconnect, go-zookeeper sets the watch again
// in a request that ours can overtake), nothing was added to the path or
// taken from it, so the next acquisitions take the listing's verdict
// without listing again, a refusal included.
func (s *Semaphore) checkLayout(ctx context.Context) error {
	checks := layoutsOf(s.sess)
	if standing, err := checks.verdict(s.sess, s.at.Dir); standing {
		return err
	}
	epoch, counted := s.sess.Disconnects()
	var names []string
	var events <-chan zk.Event
	err := s.sess.Retry(ctx, func(conn *zk.Conn) error {
		var err error
		names, _, events, err = conn.ChildrenW(s.at.Dir)
		return znode.RefusedRead(err, s.at.Dir)
	})
	if err != nil {
		return fmt.Errorf("list %s: %w", s.at.Path, err)
	}
	err = layout.Check(s.at.Path, names, layout.Semaphore)
	if counted {
		checks.remember(s.sess, s.at.Dir, layoutCheck{events: events, epoch: epoch, err: err})
	}
	return err
}

// A layoutCheck is a listing's verdict on a path, with the watch it left
// and the session's Disconnects before it was sent.
type layoutCheck struct {
	events <-chan zk.Event
	epoch  int64
	err    error
}

// holds reports whether the check still stands for sess: its watch has not
// fired and no connection was lost since.
func (c layoutCheck) holds(sess *recipes.Session) bool {
	select {
	case <-c.events:
		return false
	default:
	}
	n, _ := sess.Disconnects()
	return n == c.epoch
}

// layoutChecks are a session's checks that still stand, or may, by
// semaphore path. Each check that lists sweeps out those that no longer do,
// so there is at most one for each path.
type layoutChecks struct {
	sync.Mutex
	m map[string]layoutCheck
}

// layoutsKey keeps a session's layoutChecks in its state.
type layoutsKey struct{}

// layoutsOf returns sess's layout checks.
func layoutsOf(sess *recipes.Session) *layoutChecks {
	return znode.StateOf(sess).Value(layoutsKey{}, func() any {
		return &layoutChecks{m: map[string]layoutCheck{}}
	}).(*layoutChecks)
}

// verdict reports whether the session's last check of the path dir still
// stands, and its verdict.
func (c *layoutChecks) verdict(sess *recipes.Session, dir string) (standing bool, err error) {
	c.Lock()
	defer c.Unlock()
	check, found := c.m[dir]
	if !found || !check.holds(sess) {
		delete(c.m, dir)
		return false, nil
	}
	return true, check.err
}

// remember keeps a check's verdict and watch.
func (c *layoutChecks) remember(sess *recipes.Session, dir string, check layoutCheck) {
	c.Lock()
	defer c.Unlock()
	for other, oc := range c.m {
		if !oc.holds(sess) {
			delete(c.m, other)
		}
	}
	c.m[dir] = check
}

func wrapSemaphore(path string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("semaphore %s: %w", path, err)
}

// releaseNodes gives back leases taken by an acquire that failed.
func releaseNodes(nodes []*seqnode.Hold) {
	for _, n := range nodes {
		_ = n.Release(context.Background())
	}
}

// firstUse checks the path's layout, then agrees on the maximum.
func (s *Semaphore) firstUse(ctx context.Context) error {
	if err := s.checkLayout(ctx); err != nil {
		return err
	}
	if s.count != "" {
		s.agreed.Store(&layoutCheck{}) // a shared count is agreed on by its node
		return nil
	}
	return s.agreeMax(ctx)
}

// agreeMax records the maximum in the path's node, or checks it against the
// one recorded there. It runs under the gate, which created the node. A
// record of another maximum stands while a lease is held or an acquirer is
// queued at the gate (their maximum is that one); on an idle semaphore it is
// replaced by ours. Every record is written under the gate, and every
// Semaphore that agreed watches it, so one whose record was replaced agrees
// again on its next acquire, which queues at the gate behind the writer and
// so sees the watch fire first.
func (s *Semaphore) agreeMax(ctx context.Context) error {
	want := maxLeasesPrefix + strconv.Itoa(s.max)
	epoch, counted := s.sess.Disconnects()
	var changed <-chan zk.Event
	err := s.sess.Retry(ctx, func(conn *zk.Conn) error {
		for {
			// A session that cannot count its disconnects agrees on
			// every acquire (below), and go-zookeeper keeps a watch's
			// channel until it fires: no watch then.
			var data []byte
			var st *zk.Stat
			var events <-chan zk.Event
			var err error
			if counted {
				data, st, events, err = conn.GetW(s.at.Dir)
			} else {
				data, st, err = conn.Get(s.at.Dir)
			}
			if err != nil {
				return znode.RefusedRead(err, s.at.Dir)
			}
			recorded, ours := strings.CutPrefix(string(data), maxLeasesPrefix)
			if string(data) == want || (len(data) != 0 && !ours) {
				changed = events // ours, or data not ours to judge
				return nil
			}
			if len(data) != 0 {
				busy, err := s.busy(conn)
				if err != nil {
					return err
				}
				if busy != "" {
					return fmt.Errorf("%w: %s is in use with %s leases (%s), this client says %d",
						ErrMaxLeases, s.at.Path, recorded, busy, s.max)
				}
			}
			// Record ours, then look again: our write fires the watch
			// just set, and a bad version means someone else recorded
			// one meanwhile.
			_, err = znode.Set(conn, s.at.Dir, []byte(want), st.Version)
			if err != nil && !errors.Is(err, zk.ErrBadVersion) {
				return err
			}
		}
	})
	if err != nil {
		return err
	}
	if !counted {
		epoch = -1 // a check that never stands: agree on every acquire
	}
	s.agreed.Store(&layoutCheck{events: changed, epoch: epoch})
	return nil
}

// busy says why the maximum recorded for the semaphore still stands: "held"
// while a lease node exists, "waited for" while an acquirer other than us
// is queued at the gate; "" if neither.
func (s *Semaphore) busy(conn *zk.Conn) (string, error) {
	leases, _, err := conn.Children(s.leases.Dir)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return "", znode.RefusedRead(err, s.leases.Dir)
	}
	if len(leases) > 0 {
		return "held", nil
	}
	gate, _, err := conn.Children(s.gate.Dir)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return "", znode.RefusedRead(err, s.gate.Dir)
	}
	if len(gate) > 1 {
		return "waited for", nil
	}
	return "", nil
}

// stillAgreed reports whether the maximum this Semaphore agreed on still
// stands: it agreed, and the record has not changed (nor been reaped) since.
func (s *Semaphore) stillAgreed() bool {
	c := s.agreed.Load()
	if c == nil {
		return false
	}
	if c.events == nil && c.epoch != -1 {
		return true // a shared count
	}
	return c.holds(s.sess) // never, with epoch -1
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
