package seqnode

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/znode"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// watchedListing is a listing of the lock directory that left a watch on it.
type watchedListing struct {
	nodes  []Node
	stat   *zk.Stat
	events <-chan zk.Event
	token  int64 // our token, if the listing proves one (tokenFromListing)
}

// newTurn is the Turn of our node at path, which this listing shows holds: its
// watch on the directory is all the turn needs until something changes there.
// Its token is the one the listing proves, if it proves one, else token (an
// earlier read's, or 0). A bare turn has no token and watches nothing.
func (l watchedListing) newTurn(sess znode.Session, spec Spec, path string, token int64) *Turn {
	if spec.bare() {
		return bareTurn(sess, path)
	}
	if l.token != 0 {
		token = l.token
	}
	return startTurn(sess, path, token, l.events, false, false)
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
	if spec.bare() {
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
// directory proves, or 0 if it proves none (the turn then reads the zxid that
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
// write node's hold, which was ahead of ours, and keeps that turn's token,
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

// list reads the children of the lock directory in lock order. A missing
// directory (a reaped container) has no children.
func list(ctx context.Context, sess znode.Session, spec Spec) ([]Node, error) {
	names, err := znode.Children(ctx, sess, spec.Dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", spec.Dir, err)
	}
	return ParseAll(names, spec.siblings()...), nil
}
