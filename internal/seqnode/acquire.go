// Package seqnode is the sequential-node engine behind every lock recipe:
// Curator's LockInternals, done once. A recipe describes its nodes (directory,
// lock name, the siblings it competes with) and a Predicate; the engine
// creates the node, waits its turn watching one other node (or a few, all
// of which must go: Spec.WaitAll), and hands back a Hold that reports its
// own loss.
package seqnode

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/znode"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// Spec describes one kind of lock node.
type Spec struct {
	Dir      string    // directory holding the lock nodes; created as containers
	Top      string    // the recipe's own path: Dir or one above it; "" for Dir (see znode.ACLs)
	Prefix   string    // lock name of our node: "lock-", "__READ__", "__WRIT__", "lease-"
	Siblings []string  // lock names that order the directory; default {Prefix}
	Data     []byte    // our node's data
	Holds    Predicate // whether we hold, and whom to watch if not

	// Mark makes a release tell the next waiter that the node it waits
	// for held, so that it holds without reading the children again
	// (marks.go). Only for a lock whose every hold is of the lowest node
	// of its directory (a mutex, a write lock whose release writes no mark
	// once it downgraded: Hold.Unmarked). A waiter then watches its own
	// node, as it must to trust a mark, even with Bare.
	Mark bool

	// Sequence, if set, is put after the lock name instead of letting
	// ZooKeeper append one: the node is then plain ephemeral. The
	// read/write lock's downgrade uses it to put a read node at its write
	// node's place in the queue (Curator 5.5's CURATOR-621 fix).
	Sequence string

	// Token, if not 0, is the hold's fencing token instead of its node's
	// zxid: a downgrade's read node, which holds at its write node's place
	// in the queue, keeps the write hold's token, so that a writer queued
	// before the downgrade, which holds after it, has a larger one.
	Token int64

	// Relist makes a waiter read the children again whenever its watched
	// node goes, instead of applying the deletion to the listing it has.
	// Only layouts where a node can appear ahead of a queued one need it.
	Relist bool

	// WaitAll, if set, names the nodes a waiter must see go, all of them,
	// before it holds (indexes into the listing), or returns nil to wait
	// as Holds says. The waiter then watches them all in one round trip
	// and, once they are all gone, holds with no read, Relist or not. It
	// is for a layout where no node can come ahead of ours once those are
	// gone: a reader waiting for the writers ahead of it, a writer
	// waiting for readers only. At most MaxWaitAll nodes: a waiter that
	// would watch more waits as Holds says.
	WaitAll func(nodes []Node, ours int) []int

	// Wake, if set, is called by a waiter on the directory (WatchDir)
	// each time it waits: the channel it returns is closed when something
	// the predicate reads besides the children has changed (a semaphore's
	// shared count) since the waiter's listing, and the waiter then lists
	// again. An error ends the acquisition.
	Wake func() (<-chan struct{}, error)

	// Bare makes a hold that only the recipe itself uses (a semaphore's
	// gate): it has no fencing token and watches nothing but the session,
	// and its waiter watches only the node ahead of it, not its own,
	// unless it watches that node's mark (Mark, with others ahead).
	Bare bool

	// Local makes the goroutines of one session queue for this lock in
	// the process (see local.go): only for a lock one node at a time
	// holds, whose nodes are all created with ZooKeeper's sequence.
	Local bool

	// Refuse, if set, is given the names in the listing made right after
	// our node was created; an error from it ends the acquire (our node is
	// deleted). Locks use it to refuse a directory another recipe uses:
	// of two recipes arriving at once, the later lister sees the other.
	Refuse func(children []string) error
}

// top is the recipe's own path: its parents get the session's ParentACL.
func (s Spec) top() string {
	if s.Top == "" {
		return s.Dir
	}
	return s.Top
}

func (s Spec) siblings() []string {
	if len(s.Siblings) == 0 {
		return []string{s.Prefix}
	}
	return s.Siblings
}

// errRequeue reports that our node vanished while we waited (someone deleted
// it): the attempt starts again with a new node at the back, as in Curator.
var errRequeue = errors.New("waiting node deleted; queueing again")

// errBusy reports that the lock is not free now: an Acquire that does not
// wait then gives up.
var errBusy = errors.New("not free")

// Acquire queues a node in spec.Dir and, if wait is true, waits until
// spec.Holds says it holds; if wait is false, it holds at its first listing
// or deletes its node and returns false.
//
// A ctx that has already ended makes Acquire return its cause before any
// request: nothing is created. Whenever Acquire returns without a Hold, our
// node has been deleted, or, if ZooKeeper cannot be reached in time, the
// session deletes it in the background as soon as it can (or it dies with
// the session). A Hold it returns knows its token.
func Acquire(ctx context.Context, sess znode.Session, spec Spec, wait bool) (*Hold, bool, error) {
	if err := znode.CtxErr(ctx); err != nil {
		return nil, false, err
	}
	var h *Hold
	var err error
	if spec.Local {
		h, err = inLocalTurn(ctx, sess, spec, wait, func(created func()) (*Hold, error) {
			return acquire(ctx, sess, spec, wait, created)
		})
	} else {
		h, err = acquire(ctx, sess, spec, wait, nil)
	}
	if errors.Is(err, errBusy) {
		return nil, false, nil
	}
	return h, err == nil, err
}

// acquire creates our node and takes its turn. created, if not nil, is
// called when a node is created (again after a requeue) and when acquire
// returns: only its first call counts.
func acquire(ctx context.Context, sess znode.Session, spec Spec, wait bool, created func()) (*Hold, error) {
	if created != nil {
		defer created()
	}
	for {
		if err := znode.CtxErr(ctx); err != nil {
			return nil, err
		}
		if err := sess.Err(); err != nil {
			return nil, err
		}
		path, first, err := createListed(ctx, sess, spec, NewUUID())
		if err != nil {
			return nil, err
		}
		if created != nil {
			created()
		}
		var marks []string
		h, err := turn(ctx, sess, spec, path, first, wait, &marks)
		if errors.Is(err, errRequeue) {
			continue // our node is gone, and with it the right to its marks
		}
		if err != nil {
			leave(sess, path, marks)
			return nil, err
		}
		if spec.Token != 0 {
			h.setToken(spec.Token)
		}
		if err := h.readToken(ctx, spec.Bare); err != nil {
			abandon(sess, h)
			return nil, err
		}
		// A process paused while it waited can wake to the notification
		// that made it the holder after its session's deadline passed:
		// that hold is no hold.
		if err := sess.Err(); err != nil {
			abandon(sess, h)
			return nil, err
		}
		// A wait that saw its turn come and ctx end at once may have
		// taken either: a ctx that has ended takes no lock.
		if err := znode.CtxErr(ctx); err != nil {
			abandon(sess, h)
			return nil, err
		}
		return h, nil
	}
}

// turn takes our node at path from its creation to a Hold, or fails. It
// starts from first, a listing made in the create's round trip, or lists
// the directory. If that listing shows we hold (a free lock), the hold is
// made at once, watching the directory through that listing; if not, turn
// returns errBusy, or, if wait is true, waits (await). A turn that gives up
// while our node may still exist leaves in *marks the marks to write when it
// is deleted (marks.go).
func turn(ctx context.Context, sess znode.Session, spec Spec, path string, first *rawListing, wait bool, marks *[]string) (*Hold, error) {
	if first == nil {
		listed := fetchListing(ctx, sess, spec)
		first = &listed
	}
	dir, err := first.interpret(spec, path)
	if err != nil {
		return nil, err
	}
	name := zpath.Base(path)
	switch at := spec.place(dir.nodes, name); {
	case at.missing:
		return nil, errRequeue
	case at.holds:
		h := dir.hold(sess, spec, path, 0)
		if spec.Relist || followed(dir.nodes, name) {
			h.marks = spec.ownMark(nil, path)
		}
		return h, nil
	case !wait:
		return nil, errBusy
	default:
		queued(ctx)
		return await(ctx, sess, spec, path, dir, at, marks)
	}
}

// abandon releases a hold that Acquire will not return, on a context of its
// own bounded by the session timeout, as znode.DeleteDetached does.
func abandon(sess znode.Session, h *Hold) {
	ctx, cancel := context.WithTimeout(context.Background(), sess.Timeout())
	defer cancel()
	_ = h.Release(ctx)
}

// createListed creates our node as create does and, on a session whose
// writes it sees (znode.SentOf), lists the directory in the same round
// trip: the listing is queued once the create is being written
// (znode.AfterWrite), so it goes out after the create on that connection,
// and ZooKeeper, which serves one session's requests in order, answers it
// after applying the create. The listing is returned only if it shows our
// node; it does not when the create took more than one try or had to make
// its parents first, or the connection changed in between. Then the turn
// lists again, as it does on a session whose writes it does not see, and
// Sent.Relists counts it.
func createListed(ctx context.Context, sess znode.Session, spec Spec, uuid string) (string, *rawListing, error) {
	done := znode.AfterWrite(ctx, sess, createName(spec, uuid), func(ctx context.Context) rawListing {
		return fetchListing(ctx, sess, spec)
	})
	path, err := create(ctx, sess, spec, uuid)
	first, listed := done(err)
	switch {
	case err != nil:
		return "", nil, err
	case listed && first.shows(path):
		return path, &first, nil
	}
	if sent := znode.SentOf(sess); sent != nil {
		sent.Relisted()
	}
	return path, nil, nil
}

// createName is the path create sends for uuid: a sequential node's
// without the sequence ZooKeeper appends.
func createName(spec Spec, uuid string) string {
	return zpath.Join(spec.Dir, ProtectedName(uuid, spec.Prefix)+spec.Sequence)
}

// create makes our protected ephemeral sequential node and returns its path.
// If a create's reply is lost, the next try first looks for the node by its
// UUID, so a retry never leaves a second node.
func create(ctx context.Context, sess znode.Session, spec Spec, uuid string) (string, error) {
	name := createName(spec, uuid)
	flags := int32(zk.FlagEphemeralSequential)
	if spec.Sequence != "" {
		flags = zk.FlagEphemeral
	}
	var path string
	sent := false
	err := sess.Retry(ctx, func(conn *zk.Conn) error {
		if sent {
			p, err := findOurs(conn, sess, spec.Dir, uuid)
			if err != nil || p != "" {
				path = p
				return err
			}
		}
		sent = true
		p, err := znode.Create(conn, name, flags, spec.Data, znode.ACLsFor(sess, spec.top()))
		path = p
		return err
	})
	if err != nil && sent {
		// We stopped after a create that may have been applied; find the
		// node and delete it once ZooKeeper can be reached (Curator's
		// CURATOR-45 cleanup).
		sess.Go(func() {
			_ = sess.Retry(context.Background(), func(conn *zk.Conn) error {
				p, err := findByUUID(conn, spec.Dir, uuid)
				if err != nil || p == "" {
					return err
				}
				return znode.IgnoreNoNode(znode.Delete(conn, p))
			})
		})
		return "", fmt.Errorf("create node in %s: %w", spec.Dir, err)
	}
	if err != nil {
		return "", fmt.Errorf("create node in %s: %w", spec.Dir, err)
	}
	return path, nil
}

// findOurs looks for the node a lost create reply may have made. A node
// with our UUID that another session owns is not ours to take (Curator's
// CURATOR-498): it is deleted, and the create is made again.
func findOurs(conn *zk.Conn, sess znode.Session, dir, uuid string) (string, error) {
	p, err := findByUUID(conn, dir, uuid)
	if err != nil || p == "" {
		return p, err
	}
	_, st, err := conn.Exists(p)
	switch {
	case err != nil:
		return "", znode.RefusedRead(err, p)
	case st == nil:
		return "", nil
	case st.EphemeralOwner != sess.ID():
		return "", znode.IgnoreNoNode(znode.Delete(conn, p))
	}
	return p, nil
}

// findByUUID looks for the node of our create with uuid. It syncs first: the
// create's reply may have been lost, so the client may now be connected to a
// follower that has not applied it yet, and a listing there would not show it.
func findByUUID(conn *zk.Conn, dir, uuid string) (string, error) {
	if _, err := conn.Sync(dir); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return "", err
	}
	children, _, err := conn.Children(dir)
	if errors.Is(err, zk.ErrNoNode) {
		return "", nil
	}
	if err != nil {
		return "", znode.RefusedRead(err, dir)
	}
	for _, c := range children {
		if UUID(c) == uuid {
			return zpath.Join(dir, c), nil
		}
	}
	return "", nil
}
