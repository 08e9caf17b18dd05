package locks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/jute"
	"github.com/zkrecipes/recipes/internal/seqnode"
	"github.com/zkrecipes/recipes/internal/telemetry"
	"github.com/zkrecipes/recipes/internal/znode"
)

// A Hold is one acquisition of a lock: what every acquire in this package
// returns, for a Mutex, either half of an RWMutex, a SemaphoreMutex, one
// lease of a Semaphore, or a MultiLock (whose Hold aggregates its members').
// It tells whether the lock is still held (Done, Err), proves it to others
// (Token, Guard, Multi), hears revocation requests (Revoked), gives the work
// a context that ends with it (Context), and lets go (Release).
//
// A Hold may be used from any goroutine; its methods are safe for concurrent
// use.
type Hold struct {
	path    string  // the lock's path, or a multi-lock's members' paths
	backing backing // one node (nodeBacking), or a multi-lock's members (membersBacking)
	key     any     // what Context carries the hold under; nil if not reentrant

	// ctx is the work's context (see Context). The hold makes and owns
	// it: it is no caller's context, only their values.
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu    sync.Mutex // guards the fields below
	count int        // acquires not yet matched by Release
	err   error      // why the hold ended; nil while held
}

// newHold wraps an engine turn. Its context has ctx's values and, if key is
// not nil, carries the hold under key. The session's telemetry records its
// end and its revocation requests (without asking to watch for them: see
// Hold.Revoked).
func newHold(ctx context.Context, key any, path string, sess *recipes.Session, turn *seqnode.Turn) *Hold {
	h := &Hold{path: path, backing: nodeBacking{sess: sess, turn: turn}, key: key, count: 1}
	// The work's context: ctx's values, without its end or the
	// acquisition's WithQueued.
	h.ctx, h.cancel = context.WithCancelCause(seqnode.WithoutQueued(context.WithoutCancel(ctx)))
	if key != nil {
		h.ctx = context.WithValue(h.ctx, key, h)
	}
	turn.OnEnd(h.end)
	recipe := "semaphore" // a lease: no key, as a Semaphore is not reentrant
	if k, ok := key.(holdKey); ok {
		recipe = k.kind
	}
	rec, start := znode.Of(sess).Recorder(), time.Now()
	turn.OnEnd(func(err error) {
		var lost error
		if !errors.Is(err, ErrReleased) {
			lost = err
		}
		rec.HoldEnded(recipe, path, start, lost,
			telemetry.Cause(err, recipes.ErrSessionExpired, recipes.ErrSessionLost, recipes.ErrClosed))
	})
	turn.AfterRevoke(func() { rec.Revoked(recipe, path) })
	return h
}

// newMultiHold aggregates members. Its context carries every hold they
// carry, so that a nested Lock of a member re-enters it.
func newMultiHold(ctx context.Context, key any, path string, members []*Hold) *Hold {
	multi := &membersBacking{all: members}
	h := &Hold{path: path, backing: multi, key: key, count: 1}
	hctx := seqnode.WithoutQueued(context.WithoutCancel(ctx))
	for _, c := range h.carried(nil) {
		hctx = context.WithValue(hctx, c.key, c)
	}
	h.ctx, h.cancel = context.WithCancelCause(hctx)
	for _, m := range members {
		m.whenEnded(func(err error) {
			if !multi.ending.Load() {
				h.end(fmt.Errorf("%s: %w", m.path, err))
			}
		})
	}
	return h
}

// carried appends to hs the reentrant holds in h, h itself last.
func (h *Hold) carried(hs []*Hold) []*Hold {
	for _, m := range h.backing.members() {
		hs = m.carried(hs)
	}
	if h.key != nil {
		hs = append(hs, h)
	}
	return hs
}

// Path returns the lock's path; for a multi-lock, its members' paths in
// path order, joined by commas (as MultiLock.Path).
func (h *Hold) Path() string { return h.path }

// Node returns the full path of the node that holds the lock, which Revoke
// and Participants name (relative to the session's chroot, like them); ""
// for a multi-lock (see Members).
func (h *Hold) Node() string { return h.backing.node() }

// Token returns the fencing token: a ZooKeeper zxid, the one that created
// the holder's node or one from the moment the holder's listing showed it
// held (docs/semantics.md, "Fencing"). It grows with every new holder of the
// lock, so a storage system can refuse
// writes that carry a token lower than one it has seen. The acquire made
// sure it is known: Token sends no request.
//
// A multi-lock's Hold has no token of its own: its Token is 0, which no
// lock's token is. Each member has its own (Members), and a store guarded by
// one member must be fenced with that member's token. No single number will
// do: the largest of the members' tokens can come from another lock, taken
// after a later holder of this one queued, so a stale holder's largest can
// exceed the later holder's token on the shared lock.
func (h *Hold) Token() int64 { return h.backing.token() }

// Members returns a multi-lock's member holds in path order,
// each with its own path, node and token (the tokens to fence each member's
// store with); nil for any other hold.
func (h *Hold) Members() []*Hold { return h.backing.members() }

// Guard returns checks to put first in a zk.Multi so that the transaction
// fails unless the lock is still held: one per node, so a multi-lock's
// checks every member. Multi puts them there.
func (h *Hold) Guard() []*zk.CheckVersionRequest { return h.backing.guard() }

// Multi runs ops as one ZooKeeper transaction that succeeds only while the
// lock is still held, checked by ZooKeeper with Guard; it returns the
// responses to ops. If the lock has been lost, nothing is applied and the
// error wraps ErrLockLost. The transaction is sent once and never retried; a
// ctx that has ended sends nothing. A multi-lock's members must share one
// session, or Multi fails with recipes.ErrInvalid. So does a transaction, guards
// included, larger than ZooKeeper takes (over recipes.MaxRequest bytes as
// go-zookeeper encodes it), or with an op zk.Conn.Multi does not know: it is
// not sent.
func (h *Hold) Multi(ctx context.Context, ops ...any) ([]zk.MultiResponse, error) {
	if err := args.Context(ctx, "locks: Hold.Multi"); err != nil {
		return nil, err
	}
	if err := znode.CtxErr(ctx); err != nil {
		return nil, fmt.Errorf("multi under %s: %w", h.path, err)
	}
	if err := h.Err(); err != nil {
		return nil, fmt.Errorf("multi under %s: %w", h.path, err)
	}
	sess, err := h.backing.session()
	if err != nil {
		return nil, fmt.Errorf("%w: multi under %s: %w", recipes.ErrInvalid, h.path, err)
	}
	guards := h.Guard()
	all := make([]any, 0, len(guards)+len(ops))
	for _, g := range guards {
		all = append(all, g)
	}
	all = append(all, ops...)
	size, err := jute.Multi(all...)
	if err == nil {
		err = args.Fits("the multi", size)
	} else {
		err = fmt.Errorf("%w: %w", recipes.ErrInvalid, err)
	}
	if err != nil {
		return nil, fmt.Errorf("multi under %s: %w", h.path, err)
	}
	res, err := znode.Multi(sess.Conn(), all...)
	for i := range min(len(guards), len(res)) {
		if errors.Is(res[i].Error, zk.ErrNoNode) {
			return res, fmt.Errorf("multi under %s: %w: node %s is gone", h.path, ErrLockLost, guards[i].Path)
		}
	}
	if err != nil {
		return res, fmt.Errorf("multi under %s: %w", h.path, err)
	}
	return res[len(guards):], nil
}

// Revoked returns a channel that is closed when someone asks the holder to
// let go (see Revoke); for a multi-lock, when someone asks any member's.
// Nothing is released for it: that is the holder's call. The first call
// starts listening, and sees a request written before it.
func (h *Hold) Revoked() <-chan struct{} { return h.backing.revoked() }

// Done returns a channel that is closed when the hold ends: lost, or
// released by its outermost Release.
func (h *Hold) Done() <-chan struct{} { return h.ctx.Done() }

// Err returns nil while the lock is held. Once Done is closed it returns an
// error wrapping ErrLockLost, with the cause (the node was deleted, or the
// session ended), or ErrReleased. It also looks at the session's loss
// deadline itself (Session.Err), so a process that was paused past it learns
// of the loss from Err even before Done is closed.
func (h *Hold) Err() error {
	h.mu.Lock()
	err := h.err
	h.mu.Unlock()
	if err != nil {
		return err
	}
	return h.backing.lost()
}

// Context returns the context to do the work in. It carries the values of
// the context given to the acquire, but for WithQueued's function, and not
// its deadline or cancellation: that one bounds only the wait. It is
// cancelled when the hold ends: with a cause wrapping ErrLockLost (see
// context.Cause) when the lock is lost, and with ErrReleased by the
// outermost Release.
//
// An acquire of the same lock with this context (or one derived from it)
// re-enters: it returns this Hold at once, with no ZooKeeper request, and
// counts one more Release to come.
func (h *Hold) Context() context.Context { return h.ctx }

// Session returns the session the lock is held in: the hold ends when it
// does. A multi-lock's is the one session of its members, or nil if they
// are in different sessions (see Members for each). An election's term
// (election.Runner's Lead) reaches the session the Runner made this way,
// and a test can end it: zktest.ExpireSession(t, h.Session().ID()).
func (h *Hold) Session() *recipes.Session {
	sess, err := h.backing.session()
	if err != nil {
		return nil
	}
	return sess
}

// Release undoes one acquire. The outermost Release (one per acquire,
// counting reentrant ones) deletes the node, retrying across connection loss
// until ZooKeeper confirms or ctx ends; past that, the session finishes the
// delete in the background and Release returns ctx's cause. Either way the
// hold ends, and its Context is cancelled, before Release returns. A
// multi-lock's releases its members all at once, goes on past a member that
// fails, and returns every failure, each naming its member.
//
// If the lock was lost while held, Release still cleans up and returns an
// error wrapping ErrLockLost: the work done under it was not protected to
// the end. Releasing a hold once more than it was acquired does nothing and
// returns an error wrapping ErrNotHeld.
func (h *Hold) Release(ctx context.Context) error {
	if err := args.Context(ctx, "locks: Hold.Release"); err != nil {
		return err
	}
	h.mu.Lock()
	if h.count == 0 {
		h.mu.Unlock()
		return fmt.Errorf("%w: release %s: already released", ErrNotHeld, h.path)
	}
	h.count--
	last := h.count == 0
	if last {
		h.backing.releasing()
	}
	h.mu.Unlock()
	if !last {
		if err := h.Err(); err != nil {
			return fmt.Errorf("release %s: %w", h.path, err)
		}
		return nil
	}
	return h.backing.release(ctx, h)
}

// releaseAll releases holds all at once, so that their deletes share a
// round trip, and returns every failure, each naming its lock.
func releaseAll(ctx context.Context, holds []*Hold) error {
	errs := make([]error, len(holds))
	var wg sync.WaitGroup
	for i, m := range holds {
		wg.Go(func() {
			if err := m.Release(ctx); err != nil {
				errs[i] = fmt.Errorf("multi-lock: %w", err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// end records why the hold ended, once, and cancels its context.
func (h *Hold) end(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err == nil {
		h.err = err
		h.cancel(err)
	}
}

// whenEnded calls f, on a goroutine of its own, with the hold's error once
// it ends; stop stops that if it has not started.
func (h *Hold) whenEnded(f func(error)) (stop func() bool) {
	return context.AfterFunc(h.ctx, func() { f(h.Err()) })
}
