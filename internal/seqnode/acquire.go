package seqnode

import (
	"context"
	"errors"

	"github.com/zkrecipes/recipes/internal/znode"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// errRequeue reports that our node vanished while we waited (someone deleted
// it): the attempt starts again with a new node at the back, as in Curator.
var errRequeue = errors.New("waiting node deleted; queueing again")

// errBusy reports that the lock is not free now: an Acquire that does not
// wait then gives up.
var errBusy = errors.New("not free")

// Acquire queues a node in spec.Dir and, if wait is true, waits until
// spec.Predicate says it holds; if wait is false, it holds at its first listing
// or deletes its node and returns false.
//
// A ctx that has already ended makes Acquire return its cause before any
// request: nothing is created. Whenever Acquire returns without a Turn, our
// node has been deleted, or, if ZooKeeper cannot be reached in time, the
// session deletes it in the background as soon as it can (or it dies with
// the session). A Turn it returns knows its token.
func Acquire(ctx context.Context, sess znode.Session, spec Spec, wait bool) (*Turn, bool, error) {
	if err := znode.CtxErr(ctx); err != nil {
		return nil, false, err
	}
	var t *Turn
	var err error
	if spec.local() {
		t, err = queueLocally(ctx, sess, spec, wait, func(created func()) (*Turn, error) {
			return acquire(ctx, sess, spec, wait, created)
		})
	} else {
		t, err = acquire(ctx, sess, spec, wait, nil)
	}
	if errors.Is(err, errBusy) {
		return nil, false, nil
	}
	return t, err == nil, err
}

// acquire creates our node and takes its turn. created, if not nil, is
// called when a node is created (again after a requeue) and when acquire
// returns: only its first call counts.
func acquire(ctx context.Context, sess znode.Session, spec Spec, wait bool, created func()) (*Turn, error) {
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
		t, err := take(ctx, sess, spec, path, first, wait, &marks)
		if errors.Is(err, errRequeue) {
			continue // our node is gone, and with it the right to its marks
		}
		if err != nil {
			leave(sess, path, marks)
			return nil, err
		}
		// A downgrade's read hold keeps its write hold's token, so that a
		// writer queued before the downgrade, which holds after it, has a
		// larger one.
		if spec.Token != 0 {
			t.setToken(spec.Token)
		}
		if err := t.readToken(ctx, spec.bare()); err != nil {
			abandon(sess, t)
			return nil, err
		}
		// A process paused while it waited can wake to the notification
		// that made it the holder after its session's deadline passed:
		// that turn is no turn.
		if err := sess.Err(); err != nil {
			abandon(sess, t)
			return nil, err
		}
		// A wait that saw its turn come and ctx end at once may have
		// taken either: a ctx that has ended takes no lock.
		if err := znode.CtxErr(ctx); err != nil {
			abandon(sess, t)
			return nil, err
		}
		return t, nil
	}
}

// take takes our node at path from its creation to a Turn, or fails. It
// starts from first, a listing made in the create's round trip, or lists
// the directory. If that listing shows we hold (a free lock), the turn is
// made at once, watching the directory through that listing; if not, take
// returns errBusy, or, if wait is true, waits (await). A take that gives up
// while our node may still exist leaves in *marks the marks to write when it
// is deleted (marks.go).
func take(ctx context.Context, sess znode.Session, spec Spec, path string, first *rawListing, wait bool, marks *[]string) (*Turn, error) {
	if first == nil {
		listed := fetchListing(ctx, sess, spec)
		first = &listed
	}
	dir, err := first.interpret(spec, path)
	if err != nil {
		return nil, err
	}
	name := zpath.Base(path)
	switch at := spec.locate(dir.nodes, name); {
	case at.missing:
		return nil, errRequeue
	case at.turn:
		t := dir.newTurn(sess, spec, path, 0)
		if spec.relists() || followed(dir.nodes, name) {
			t.marks = spec.ownMark(nil, path)
		}
		return t, nil
	case !wait:
		return nil, errBusy
	default:
		queued(ctx)
		return await(ctx, sess, spec, path, dir, at, marks)
	}
}

// abandon releases a turn that Acquire will not return, on a context of its
// own bounded by the session timeout, as znode.DeleteDetached does.
func abandon(sess znode.Session, t *Turn) {
	ctx, cancel := context.WithTimeout(context.Background(), sess.Timeout())
	defer cancel()
	_ = t.Release(ctx)
}
