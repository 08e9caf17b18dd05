package seqnode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/znode"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// RevokeData is what Curator's Revoker writes into a node to ask its holder to
// let go.
var RevokeData = []byte("__REVOKE__")

// ownWatch is a read of our own node that leaves a data watch on it: the
// watch fires when the node is deleted (loss) or its data changes
// (revocation request).
type ownWatch struct {
	data   []byte
	stat   *zk.Stat
	events <-chan zk.Event
	err    error
	epoch  int64 // the session's Disconnects before the read was sent
	exact  bool  // the session can count its lost connections
}

func watchOwn(ctx context.Context, sess znode.Session, path string) ownWatch {
	var w ownWatch
	w.epoch, w.exact = sess.Disconnects()
	w.data, w.stat, w.events, w.err = znode.GetW(ctx, sess, path)
	return w
}

// countsDisconnects reports whether the session counts its lost
// connections: without that, no fast hand-off is trusted (ownWatch.current).
func countsDisconnects(sess znode.Session) bool {
	_, ok := sess.Disconnects()
	return ok
}

// current reports whether no connection was lost since the watch was set
// (true for a bare waiter, which has none): then ZooKeeper sent its events,
// and those of every watch set after it, over one connection, in order, so
// a deletion of our node that came before a notification we got is here
// already. After a reconnect go-zookeeper sets the watches again in a
// request of its own, which requests sent meanwhile can overtake: a watch set
// by one of those could then report a later change before ours reports our
// node gone.
func (w *ownWatch) current(sess znode.Session) bool {
	if w == nil {
		return true
	}
	n, ok := sess.Disconnects()
	return ok && w.exact && n == w.epoch
}

// waiting is the error that ends a wait for this read of our own node at
// path: errRequeue if it is gone (someone deleted it), the read's error, or
// nil.
func (w ownWatch) waiting(path string) error {
	switch {
	case errors.Is(w.err, zk.ErrNoNode):
		return errRequeue
	case w.err != nil:
		return fmt.Errorf("watch %s: %w", path, w.err)
	}
	return nil
}

// handle applies an event of our own node's watch: its deletion means
// requeue (someone deleted it); a data change (a revocation request: see
// revokes) has the node read and watched again.
func (w *ownWatch) handle(ctx context.Context, sess znode.Session, path string, e zk.Event) error {
	gone, err := deleted(sess, e)
	if gone {
		return errRequeue
	}
	if err != nil {
		return err
	}
	*w = watchOwn(ctx, sess, path)
	return w.waiting(path)
}

// settle handles an event of our own node's watch that has come but not
// been read, without waiting for one.
func (w *ownWatch) settle(ctx context.Context, sess znode.Session, path string) error {
	if w == nil {
		return nil
	}
	select {
	case e := <-w.events:
		return w.handle(ctx, sess, path, e)
	default:
		return nil
	}
}

// revokes reports whether the last read of our node found a revocation
// request in it.
func (w *ownWatch) revokes() bool {
	return w != nil && bytes.Equal(w.data, RevokeData)
}

// deleted reads the event of a node's watch: whether the node was deleted,
// or the error of a watch that stopped (the connection or the session
// ended). Any other event (a data change) spent the watch.
func deleted(sess znode.Session, e zk.Event) (bool, error) {
	switch e.Type {
	case zk.EventNodeDeleted:
		return true, nil
	case zk.EventNotWatching:
		return false, znode.WatchStopped(sess, e.Err)
	}
	return false, nil
}

// A place is what a waiter keeps from a listing: whether we hold, and if not,
// the node to watch ("" for the directory), any others to watch with it
// (Spec.WaitAll), and whether we hold once they are gone.
type place struct {
	holds      bool
	missing    bool     // our node is not in the listing
	watch      string   // name of the node to watch
	also       []string // names of the other nodes to watch, with WaitAll
	all        bool     // WaitAll named them: we hold once all are gone, with no read
	ofOurKind  bool     // watch has our lock name: a release of its may be marked
	holdsAfter bool     // the predicate says we hold once watch (and also) are gone
}

// MaxWaitAll bounds the nodes a waiter watches at once (Spec.WaitAll), and
// so what it keeps.
const MaxWaitAll = 16

// place applies the predicate to a listing, for our node name.
func (s Spec) place(nodes []Node, name string) place {
	ours := Index(nodes, name)
	if ours < 0 {
		return place{missing: true}
	}
	holds, w := s.Holds(nodes, ours)
	switch {
	case holds:
		return place{holds: true}
	case w == WatchDir:
		return place{}
	}
	if p, ok := s.placeAll(nodes, ours); ok {
		return p
	}
	p := place{watch: nodes[w].Name, ofOurKind: nodes[w].Prefix == s.Prefix}
	p.holdsAfter = s.holdsWithout(nodes, ours, w)
	return p
}

// placeAll is the place WaitAll gives, if it names nodes and we hold once
// they are gone (which it promises, and which is checked).
func (s Spec) placeAll(nodes []Node, ours int) (place, bool) {
	if s.WaitAll == nil {
		return place{}, false
	}
	all := s.WaitAll(nodes, ours)
	if len(all) == 0 || len(all) > MaxWaitAll || slices.Contains(all, ours) || !s.holdsWithout(nodes, ours, all...) {
		return place{}, false
	}
	p := place{watch: nodes[all[0]].Name, all: true, holdsAfter: true}
	for _, i := range all[1:] {
		p.also = append(p.also, nodes[i].Name)
	}
	return p, true
}

// holdsWithout reports whether the predicate says our node, at index ours
// in nodes, holds once the nodes at the indexes gone are removed.
func (s Spec) holdsWithout(nodes []Node, ours int, gone ...int) bool {
	rest := make([]Node, 0, len(nodes))
	at := -1
	for i, n := range nodes {
		switch {
		case i == ours:
			at = len(rest)
		case slices.Contains(gone, i):
			continue
		}
		rest = append(rest, n)
	}
	holds, _ := s.Holds(rest, at)
	return holds
}

// waitDir waits for the directory's watch to fire, or for spec's Wake.
func waitDir(ctx context.Context, sess znode.Session, spec Spec, events <-chan zk.Event) error {
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

// watchedListing is a listing of the lock directory that left a watch on it.
type watchedListing struct {
	nodes  []Node
	stat   *zk.Stat
	events <-chan zk.Event
	token  int64 // our token, if the listing proves one (tokenFromListing)
}

// hold is the Hold of our node at path, which this listing shows holds: its
// watch on the directory is all the hold needs until something changes there.
// Its token is the one the listing proves, if it proves one, else token (an
// earlier read's, or 0). A bare hold has no token and watches nothing.
func (l watchedListing) hold(sess znode.Session, spec Spec, path string, token int64) *Hold {
	if spec.Bare {
		return bareHold(sess, path)
	}
	if l.token != 0 {
		token = l.token
	}
	return dirHold(sess, path, token, l.events)
}

// listWatched lists the directory of our node at path and watches it, unless
// the spec is bare (then events is nil).
func listWatched(ctx context.Context, sess znode.Session, spec Spec, path string) (watchedListing, error) {
	return fetchListing(ctx, sess, spec).interpret(spec, path)
}

// A rawListing is the answer to a listing of a lock directory, read but not
// yet looked at.
type rawListing struct {
	names  []string
	stat   *zk.Stat
	events <-chan zk.Event
	err    error
}

// fetchListing lists spec.Dir, with a watch unless the spec is bare.
func fetchListing(ctx context.Context, sess znode.Session, spec Spec) rawListing {
	var r rawListing
	if spec.Bare {
		r.names, r.stat, r.err = znode.ChildrenStat(ctx, sess, spec.Dir)
	} else {
		r.names, r.stat, r.events, r.err = znode.ChildrenW(ctx, sess, spec.Dir)
	}
	return r
}

// interpret reads the listing for our node at path.
func (r rawListing) interpret(spec Spec, path string) (watchedListing, error) {
	l := watchedListing{stat: r.stat, events: r.events}
	switch {
	case errors.Is(r.err, zk.ErrNoNode):
		return l, errRequeue // the directory, and so our node, is gone
	case r.err != nil:
		return l, fmt.Errorf("list %s: %w", spec.Dir, r.err)
	}
	if spec.Refuse != nil {
		if err := spec.Refuse(r.names); err != nil {
			return l, err
		}
	}
	l.nodes = ParseAll(r.names, spec.siblings()...)
	l.token = tokenFromListing(spec, r.stat, l.nodes, zpath.Base(path))
	return l, nil
}

// shows reports whether the listing has our node at path in it.
func (r rawListing) shows(path string) bool {
	return r.err == nil && slices.Contains(r.names, zpath.Base(path))
}

// readCzxid reads the zxid that created our node at path: its token. A
// missing node means requeue.
func readCzxid(ctx context.Context, sess znode.Session, path string) (int64, error) {
	st, err := znode.Stat(ctx, sess, path)
	switch {
	case err != nil:
		return 0, fmt.Errorf("read %s: %w", path, err)
	case st == nil:
		return 0, errRequeue
	}
	return st.Czxid, nil
}

// tokenFromListing returns a token for our node that a listing of its
// directory proves, or 0 if it proves none (the hold then reads the zxid that
// created our node).
//
// The directory's pzxid (the zxid of the last child created or deleted
// before the listing) is one when our node got its sequence number as it
// was created (not a downgrade node, which takes its write node's) and no
// node in the listing has a larger number. It is at least our node's
// creation zxid. Every holder after us is either a node created after the
// listing, whose creation zxid is larger, or one that holds only after our
// delete, whose token is at least that delete's zxid: so tokens still grow
// from holder to holder. A node with a smaller number created after ours
// is a read/write downgrade node; it holds only as the continuation of its
// write node's hold, which was ahead of ours, and keeps that hold's token,
// so it is not a later holder. If the listing also shows that nothing but
// our create changed the children (the child version, which creates and
// deletes both move, is one more than our number, which creates alone
// move), the pzxid is our creation zxid itself.
func tokenFromListing(spec Spec, dir *zk.Stat, nodes []Node, name string) int64 {
	ours := Index(nodes, name)
	if ours < 0 {
		return 0
	}
	if n := nodes[ours]; n.Prefix == spec.Prefix && dir.Cversion == n.Seq+1 {
		return dir.Pzxid
	}
	if spec.Sequence != "" {
		return 0 // a downgrade node
	}
	for _, n := range nodes[ours+1:] {
		if n.HasSeq {
			return 0 // a node created after ours is in the listing (Sort)
		}
	}
	return dir.Pzxid
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
	if st.EphemeralOwner == sess.ID() && !spec.Bare && blocks {
		waitsForOwnSession(ctx, sess, spec, target)
	}
	return ev, nil
}

// waitsForOwnSession says, through the session's telemetry, that a waiter
// waits for a node of its own session: Go has no goroutine identity, so a
// nested Lock re-enters only when given its hold's Context, and one given
// the outer acquire's context (as Curator's per-thread reentrancy would
// let it) waits for itself, forever without a deadline.
func waitsForOwnSession(ctx context.Context, sess znode.Session, spec Spec, target string) {
	znode.RecorderOf(sess).WaitsForOwnSession(ctx, zpath.Outside(sess.Chroot(), spec.Dir), zpath.Outside(sess.Chroot(), target))
}

// list reads the children of the lock directory in lock order. A missing
// directory (a reaped container) has no children.
func list(ctx context.Context, sess znode.Session, spec Spec) ([]Node, error) {
	names, err := znode.Children(ctx, sess, spec.Dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", spec.Dir, err)
	}
	return ParseAll(names, spec.siblings()...), nil
}
