package locks

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/seqnode"
	"github.com/zkrecipes/recipes/internal/znode"
)

// gateSpec describes the gate: a Mutex's node, whose hold only the
// semaphore uses, so it needs no token and no watch of its own (a gate
// deleted by someone else lets a second acquirer wait for leases too, which
// the lease rule keeps safe). Its releases are marked as a Mutex's are; a
// waiter behind others watches its own node while it waits, to trust a
// mark.
func gateSpec(path string, data []byte) seqnode.Spec {
	spec := mutexSpec(path, data)
	spec.Shape = seqnode.Gate
	return spec
}

// take takes n lease nodes, or none, while holding the gate.
func (s *Semaphore) take(ctx context.Context, n int, w how) ([]*seqnode.Turn, bool, error) {
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
	gate, ok, err := seqnode.Acquire(ctx, s.sess, s.gate, w == waitTurn)
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
func (s *Semaphore) takeGated(ctx context.Context, gate *seqnode.Turn, n int, w how) ([]*seqnode.Turn, bool, error) {
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
// session shows what it writes (znode.Internals.Sent): it returns once the delete
// is being written, so that every later request of the session, the next
// acquisition's gate included, goes out after it and is served after it.
// The lease's release then shares the delete's round trip. Elsewhere it
// waits for the answer. Either way it calls beside, whose requests go out
// with the delete.
func (s *Semaphore) leaveGate(ctx context.Context, gate *seqnode.Turn, beside func()) {
	release := func() {
		rctx, stop := context.WithTimeout(context.WithoutCancel(ctx), s.sess.Timeout())
		defer stop()
		_ = gate.Release(rctx)
	}
	sent := znode.Of(s.sess).Sent()
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
func (s *Semaphore) takeLeases(ctx context.Context, n int, w how) ([]*seqnode.Turn, bool, error) {
	spec, stop, err := s.leaseSpec(ctx, n)
	if err != nil {
		return nil, false, err
	}
	defer stop()
	var nodes []*seqnode.Turn
	for len(nodes) < n {
		node, ok, err := seqnode.Acquire(ctx, s.sess, spec, w == waitTurn)
		if err != nil || !ok {
			releaseNodes(nodes)
			return nil, false, err
		}
		nodes = append(nodes, node)
	}
	return nodes, true, nil
}

// releaseNodes gives back leases taken by an acquire that failed.
func releaseNodes(nodes []*seqnode.Turn) {
	for _, n := range nodes {
		_ = n.Release(context.Background())
	}
}
