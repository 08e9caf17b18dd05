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
	// From here until the turn ends, the session's deadline passing ends
	// the session (znode.Need): the hold's loss promise.
	disengage, ok := znode.Of(sess).Need().Engage(ctx, sess.Done())
	if !ok {
		if err := sess.Err(); err != nil {
			return nil, false, err
		}
		return nil, false, znode.CtxErr(ctx)
	}
	var p *pass // the goroutines of a session queue locally for a local spec (local.go)
	var t *Turn
	var err error
	if spec.local() {
		p, err = join(ctx, sess, spec, wait)
	}
	if err == nil {
		t, err = acquire(ctx, sess, spec, wait, p)
		switch {
		case p != nil && err != nil:
			p.leave()
		case p != nil:
			t.OnEnd(func(error) { p.leave() })
		}
	}
	if err == nil {
		t.OnEnd(func(error) { disengage() })
	} else {
		disengage()
	}
	if errors.Is(err, errBusy) {
		return nil, false, nil
	}
	return t, err == nil, err
}

// acquire creates our node and takes its turn, with the pass p of a local
// spec (nil otherwise): p.created is called when the first node is created,
// or when acquire gives up before.
//
// The first listing, made in the create's round trip or after it, decides:
// a free lock's turn is made at once, watching the directory through that
// listing; a busy one is given up (errBusy) or, if wait is true, waited for
// (await). A node deleted while it waits is queued again.
func acquire(ctx context.Context, sess znode.Session, spec Spec, wait bool, p *pass) (*Turn, error) {
	defer p.created()
	for {
		if err := znode.CtxErr(ctx); err != nil {
			return nil, err
		}
		if err := sess.Err(); err != nil {
			return nil, err
		}
		path, first, err := create(ctx, sess, spec)
		if err != nil {
			return nil, err
		}
		p.created()
		if first == nil {
			dir, err := listOurs(ctx, sess, spec, UUID(zpath.Base(path)))
			first = &listed{dir, err}
		}
		var t *Turn
		var marks []string // what a give-up owes when our node is deleted (marks.go)
		dir := first.dir
		switch at := dir.at; {
		case first.err != nil:
			err = first.err
		case at.missing:
			err = errRequeue
		case at.turn:
			t = newTurn(sess, path, dir.token, dir.events, false, false)
			// A turn whose listing shows no node after ours writes no
			// mark of its own: a waiter that lists later finds our node
			// first, so it is second in line, or waits for another node,
			// and never watches our mark; unless ours is a Write node
			// (relists), whose waiter second in line needs the mark all
			// the same.
			if at.followed || spec.relists() {
				t.marks = spec.ownMark(nil, path)
			}
		case !wait:
			err = errBusy
		default:
			queued(ctx)
			t, err = await(ctx, sess, spec, path, dir, &marks)
		}
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
		if !spec.bare() && t.Token() == 0 {
			err = t.readToken(ctx)
		}
		// A process paused while it waited can wake to the notification
		// that made it the holder after its session's deadline passed:
		// that turn is no turn. And a wait that saw its turn come and ctx
		// end at once may have taken either: a ctx that has ended takes
		// no lock.
		if err == nil {
			err = sess.Err()
		}
		if err == nil {
			err = znode.CtxErr(ctx)
		}
		if err != nil {
			abandon(sess, t)
			return nil, err
		}
		return t, nil
	}
}

// abandon releases a turn that Acquire will not return, on a context of its
// own bounded by the session timeout, as znode.DeleteDetached does.
func abandon(sess znode.Session, t *Turn) {
	ctx, cancel := context.WithTimeout(context.Background(), sess.Timeout())
	defer cancel()
	_ = t.Release(ctx)
}
