package seqnode

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/znode"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// await waits, from the first listing that acquire made, until the predicate
// says we hold; acquire calls it only when the lock is not free. A waiter
// watches the one node the predicate names and, in the same round trip, its
// own node.
//
// A waiter keeps no listing, only its place: the name of the node it
// watches (or, with WaitAll, the few nodes it waits for all of) and whether
// the predicate says it holds once that node is gone. Nodes created after
// ours sort after ours and a predicate is monotone, so when the watched node
// goes and the place said so, we hold, with no read: the hand-off costs the
// releaser's delete and one notification. Otherwise (others were ahead too,
// or a node may come ahead of ours: Write) we hold with no read if the
// release marked the node (marks.go), and read the children once more if
// not. Either way a waiter's memory does not grow with the queue.
func await(ctx context.Context, sess znode.Session, spec Spec, path string, dir watchedListing, marks *[]string) (_ *Turn, err error) {
	w := newWaiter(sess, spec, path, dir, marks)
	defer func() {
		if err != nil && !errors.Is(err, errRequeue) {
			w.giveUp()
		}
	}()
	for {
		switch {
		case w.at.missing:
			return nil, errRequeue
		case w.at.turn:
			return w.newTurn(), nil
		case w.at.watch == "":
			err = w.waitDir(ctx)
		default:
			err = w.waitAhead(ctx)
		}
		if err != nil {
			return nil, err
		}
	}
}

// A waiter is one acquisition's turn from its first listing on: where our
// node stands, and the watches it keeps while it waits. Its methods move it
// on; await calls them until it holds.
type waiter struct {
	sess  znode.Session
	spec  Spec
	path  string    // our node
	name  string    // its name in the directory
	marks *[]string // marks ours to write when our node is deleted (marks.go)

	dir     watchedListing // the last listing that watches the directory; its nodes are dropped
	token   int64          // our token, once a listing or a read proved it
	at      place          // where the last listing puts our node
	own     *ownWatch      // the watch of our own node, once we have waited for a node
	stale   bool           // own must be set again: a connection was lost since (ownWatch.current)
	mark    *markWatch     // the mark watch of the node we wait for, if any
	revoked bool           // a revocation request came while we waited
}

// newWaiter starts a waiter from dir, the turn's first listing.
func newWaiter(sess znode.Session, spec Spec, path string, dir watchedListing, marks *[]string) *waiter {
	w := &waiter{sess: sess, spec: spec, path: path, name: zpath.Base(path), marks: marks}
	// The first listing, made right after our create, may prove our
	// token (tokenFromListing); a later one proves one only when no lock
	// node was created after ours.
	w.token = dir.token
	w.at = dir.at
	dir.nodes = nil // a waiter keeps no listing
	w.dir = dir
	return w
}

// locateBy puts our node where the listing nodes says.
func (w *waiter) locateBy(nodes []Node) {
	w.at = w.spec.locate(nodes, Index(nodes, w.name))
}

// newTurn is the Turn of our node, which its place says holds.
func (w *waiter) newTurn() *Turn {
	var t *Turn
	switch {
	case w.own != nil && w.spec.bare():
		t = bareTurn(w.sess, w.path)
	case w.own != nil:
		t = ownTurn(w.sess, w.path, w.own, w.revoked)
	default:
		token := w.token
		if w.dir.token != 0 {
			token = w.dir.token
		}
		t = newTurn(w.sess, w.path, token, w.dir.events, false, false)
		if !w.at.followed && !w.spec.relists() {
			t.marks = *w.marks
			return t
		}
	}
	t.marks = w.spec.ownMark(*w.marks, w.path)
	return t
}

// giveUp, when the wait ends without a turn while our node may still
// exist, owes the mark of the node we waited for: ours to write when our
// node is deleted (marks.go).
func (w *waiter) giveUp() {
	if w.mark != nil {
		w.spec.owe(w.path, w.sess.ACL(), w.marks, w.mark.path)
	}
}

// waitDir waits for any change among the children (only one waiter at a
// time does this: the semaphore's gate holder), then reads them again, with
// a new watch. The listing that will show we hold may not prove our token,
// so it is read now, while we wait, not after.
func (w *waiter) waitDir(ctx context.Context) error {
	if w.token == 0 && !w.spec.bare() {
		token, err := readCzxid(ctx, w.sess, w.path)
		if err != nil {
			return err
		}
		w.token = token
	}
	if err := waitDirChange(ctx, w.sess, w.spec, w.dir.events); err != nil {
		return err
	}
	dir, err := listOurs(ctx, w.sess, w.spec, UUID(w.name))
	if err != nil {
		return err
	}
	w.at = dir.at
	dir.nodes = nil
	w.dir = dir
	return nil
}

// waitAhead waits for the node its place names (and the others WaitAll
// names with it) to go, then finds where that leaves us. A change of that
// node's data leaves us where we were: it is watched again.
func (w *waiter) waitAhead(ctx context.Context) error {
	target := zpath.Join(w.spec.Dir, w.at.watch)
	// A mark spares a read where the deletion alone does not say we
	// hold: others were ahead too, or a node may come ahead of ours
	// (Write). Only nodes of our own kind are marked.
	needMark := !w.at.turnAfter || (w.spec.relists() && !w.at.all)
	if w.spec.marks() && needMark && w.at.ofOurKind && countsDisconnects(w.sess) && (w.mark == nil || w.mark.path != MarkOf(target)) {
		w.mark = &markWatch{path: MarkOf(target)}
	}
	if w.stale {
		w.own, w.stale = nil, false
	}
	also := make([]string, len(w.at.also))
	for i, n := range w.at.also {
		also[i] = zpath.Join(w.spec.Dir, n)
	}
	gone, err := w.waitFor(ctx, target, also)
	if err != nil || !gone {
		return err
	}
	return w.afterGone(ctx)
}

// afterGone finds where we stand once the nodes we waited for are gone. We
// hold with no read if we were second or the release marked the node,
// unless our own node was deleted before: that event came first, so it is
// here already, as long as no connection was lost since we watched our
// node (else we read the children, and watch our node again).
func (w *waiter) afterGone(ctx context.Context) error {
	trusted := w.own.current(w.sess)
	marked := w.mark.fired()
	if w.mark != nil && !marked {
		w.spec.owe(w.path, w.sess.ACL(), w.marks, w.mark.path) // never written: ours to write
	}
	w.mark = nil
	if trusted && ((w.at.turnAfter && (!w.spec.relists() || w.at.all)) || marked) {
		if err := w.own.settle(ctx, w.sess, w.path); err != nil {
			return err
		}
		w.revoked = w.revoked || w.own.revokes()
		// Others may have queued behind us while we waited.
		w.at = place{turn: true, followed: true}
		return nil
	}
	if !trusted && countsDisconnects(w.sess) {
		w.stale = true
	}
	nodes, err := list(ctx, w.sess, w.spec)
	if err != nil {
		return err
	}
	w.locateBy(nodes)
	return nil
}

// waitFor watches target, and the nodes also, and waits until they are all
// deleted (true), or target's data changes (false). The first time it also
// starts watching our own node, in the same round trip. A change of the
// data of a node of also only has it watched again.
func (w *waiter) waitFor(ctx context.Context, target string, also []string) (bool, error) {
	ev, alsoEvents, err := w.watchAhead(ctx, target, also)
	if err != nil {
		return false, err
	}
	if ev != nil { // else gone before we could watch it
		if gone, err := w.waitGone(ctx, ev); err != nil || !gone {
			return false, err
		}
	}
	for i, t := range also {
		for ev := alsoEvents[i]; ev != nil; {
			gone, err := w.waitGone(ctx, ev)
			switch {
			case err != nil:
				return false, err
			case gone:
				ev = nil
			default:
				if ev, err = watchNode(ctx, w.sess, w.spec, t, w.at.turnAfter); err != nil {
					return false, err
				}
			}
		}
	}
	return true, nil
}

// watchAhead sets, in one round trip, the watches of target and of the nodes
// also, of the mark of target if we wait for one, and of our own node if
// none is set: it returns the events of the nodes' (nil for a node gone
// already). If we hold once they are gone and one is our session's, the
// session's telemetry says so (waitsForOwnSession).
func (w *waiter) watchAhead(ctx context.Context, target string, also []string) (<-chan zk.Event, []<-chan zk.Event, error) {
	blocks := w.at.turnAfter
	var ownc chan ownWatch
	// A bare waiter (a semaphore's gate) watches its own node only to
	// trust a mark, which it watches only when others are ahead and the
	// session counts its lost connections.
	if w.own == nil && (!w.spec.bare() || w.mark != nil) {
		ownc = make(chan ownWatch, 1)
		go func() { ownc <- watchOwn(ctx, w.sess, w.path) }()
	}
	var markc chan (<-chan zk.Event)
	if w.mark != nil && w.mark.events == nil {
		markc = make(chan (<-chan zk.Event), 1)
		go func() {
			_, ev, _ := znode.ExistsW(ctx, w.sess, w.mark.path)
			markc <- ev // nil if the watch was not set: no fast hand-off
		}()
	}
	type watched struct {
		events <-chan zk.Event
		err    error
	}
	alsoc := make([]chan watched, len(also))
	for i, t := range also {
		alsoc[i] = make(chan watched, 1)
		go func() {
			ev, err := watchNode(ctx, w.sess, w.spec, t, blocks)
			alsoc[i] <- watched{ev, err}
		}()
	}
	ev, err := watchNode(ctx, w.sess, w.spec, target, blocks)
	if markc != nil {
		w.mark.events = <-markc
	}
	alsoEvents := make([]<-chan zk.Event, len(also))
	for i, c := range alsoc {
		got := <-c
		alsoEvents[i] = got.events
		if err == nil {
			err = got.err
		}
	}
	if ownc != nil {
		o := <-ownc
		if err := o.waiting(w.path); err != nil {
			return nil, nil, err
		}
		w.own = &o
		w.revoked = w.revoked || o.revokes()
	}
	return ev, alsoEvents, err
}

// waitGone waits on a watched node and reports whether it was deleted
// (false: its data changed, which spends the watch). Meanwhile it keeps the
// watch on our own node: a revocation request is noted and the watch set
// again; the deletion of our node means requeue.
func (w *waiter) waitGone(ctx context.Context, ev <-chan zk.Event) (bool, error) {
	var ownEvents <-chan zk.Event // nil for a bare waiter, which watches only ev
	for {
		if w.own != nil {
			ownEvents = w.own.events
		}
		select {
		case e := <-ev:
			return deleted(w.sess, e)
		case e := <-ownEvents:
			if err := w.own.handle(ctx, w.sess, w.path, e); err != nil {
				return false, err
			}
			w.revoked = w.revoked || w.own.revokes()
		case <-w.sess.Done():
			return false, w.sess.Err()
		case <-ctx.Done():
			return false, znode.CtxErr(ctx)
		}
	}
}

// waitDirChange waits for the directory's watch to fire, or for spec's Wake:
// the channel Wake returns is closed when something the predicate reads
// besides the children (a semaphore's shared count) has changed since the
// listing; an error from Wake ends the acquisition.
func waitDirChange(ctx context.Context, sess znode.Session, spec Spec, events <-chan zk.Event) error {
	if spec.Wake == nil {
		return znode.WaitEvent(ctx, sess, events)
	}
	woken, err := spec.Wake()
	if err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- znode.WaitEvent(wctx, sess, events) }()
	select {
	case err := <-done:
		return err
	case <-woken:
		cancel()
		<-done
		return nil
	}
}

// watchNode watches the node at target, a node we wait for, and returns its
// watch's events, or nil if it is gone. If it blocks us (we hold once it
// is gone) and is our session's, the session's telemetry says so.
func watchNode(ctx context.Context, sess znode.Session, spec Spec, target string, blocks bool) (<-chan zk.Event, error) {
	_, st, ev, err := znode.GetW(ctx, sess, target)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("watch %s: %w", target, err)
	}
	if st.EphemeralOwner == sess.ID() && !spec.bare() && blocks {
		waitsForOwnSession(ctx, sess, spec, target)
	}
	return ev, nil
}

// waitsForOwnSession says, through the session's telemetry, that a waiter
// waits for a node of its own session: Go has no goroutine identity, so a
// nested Lock re-enters only when given its turn's Context, and one given
// the outer acquire's context (as Curator's per-thread reentrancy would
// let it) waits for itself, forever without a deadline.
func waitsForOwnSession(ctx context.Context, sess znode.Session, spec Spec, target string) {
	znode.Of(sess).Recorder().WaitsForOwnSession(ctx, zpath.Outside(sess.Chroot(), spec.Dir), zpath.Outside(sess.Chroot(), target))
}
