package seqnode

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/znode"
)

// A watchedListing is a listing of the lock directory, read for our node:
// where it puts our node, and the watch it left on the directory (none for
// a bare spec).
type watchedListing struct {
	nodes  []Node
	name   string // our node's name, "" if the listing does not show it
	at     place  // where the listing puts our node (Spec.locate)
	stat   *zk.Stat
	events <-chan zk.Event
	token  int64 // our token, if the listing proves one (tokenFromListing)
}

// listed is what listOurs returned, kept for later: the listing create
// sends behind the create.
type listed struct {
	dir watchedListing
	err error
}

// listOurs lists spec.Dir, with a watch unless the spec is bare, for our
// node: the one whose name has uuid in it, which the listing finds even
// before the create's answer has named it (create). Only one node has it:
// each create makes a new UUID, and a retried create deletes a node of
// another session's with ours (findOurs). listOurs puts the nodes in lock
// order, finds ours, refuses another recipe's directory, places our node,
// and proves its token if it can (not for a bare spec, which has none).
func listOurs(ctx context.Context, sess znode.Session, spec Spec, uuid string) (watchedListing, error) {
	var l watchedListing
	var names []string
	var err error
	if spec.bare() {
		names, l.stat, err = znode.ChildrenStat(ctx, sess, spec.Dir)
	} else {
		names, l.stat, l.events, err = znode.ChildrenW(ctx, sess, spec.Dir)
	}
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return l, errRequeue // the directory, and so our node, is gone
	case err != nil:
		return l, fmt.Errorf("list %s: %w", spec.Dir, err)
	}
	l.nodes = ParseAll(names, spec.siblings()...)
	ours := slices.IndexFunc(l.nodes, func(n Node) bool { return uuid != "" && UUID(n.Name) == uuid })
	if ours >= 0 {
		l.name = l.nodes[ours].Name
	}
	if spec.Refuse != nil {
		if err := spec.Refuse(names); err != nil {
			return l, err
		}
	}
	l.at = spec.locate(l.nodes, ours)
	if !spec.bare() {
		l.token = tokenFromListing(spec, l.stat, l.nodes, ours)
	}
	return l, nil
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

// tokenFromListing returns a token for our node, at index ours in nodes,
// that a listing of its directory proves, or 0 if it proves none (the turn
// then reads the zxid that created our node). It is the directory's pzxid,
// when our node got its sequence number as it was created (not a downgrade
// node, which takes its write node's) and no node listed after it did:
// docs/semantics.md ("Fencing") says why tokens then still grow from holder
// to holder. When the child version shows that nothing but our create
// changed the children (it is one more than our number: creates and deletes
// both move the one, creates alone the other), the pzxid is our creation
// zxid itself, whatever is listed after us.
func tokenFromListing(spec Spec, dir *zk.Stat, nodes []Node, ours int) int64 {
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
