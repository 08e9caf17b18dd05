package locks

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/seqnode"
)

// holdKey finds a lock's hold in a context. Locks of one kind on one path in
// one session share a key, so a nested Lock re-enters even through another
// value of the same lock.
type holdKey struct {
	kind string
	sess *recipes.Session
	path string
}

// held is one acquisition, carried by the context Lock returned.
type held struct {
	hold *seqnode.Hold

	// src is the context given to Lock, whose cancellation the held
	// context follows. It is kept (against the usual rule) for one case: a
	// read/write downgrade derives the read hold's context from the write
	// hold's, yet must follow src, not the write hold, which ends first.
	src context.Context

	mu    sync.Mutex // guards count
	count int        // Lock calls not yet matched by Unlock
}

func lookup(ctx context.Context, key holdKey) *held {
	h, _ := ctx.Value(key).(*held)
	return h
}

// attach returns a context that carries the hold and is cancelled, with the
// hold's error as cause, when the hold ends. It is a child of ctx; or, if src
// is not nil, it has ctx's values but follows src's cancellation instead.
func attach(ctx, src context.Context, key holdKey, hold *seqnode.Hold) context.Context {
	var hctx context.Context
	var cancel context.CancelCauseFunc
	if src == nil {
		src = ctx
		hctx, cancel = context.WithCancelCause(ctx)
		hold.OnEnd(cancel)
	} else {
		hctx, cancel = context.WithCancelCause(context.WithoutCancel(ctx))
		stop := context.AfterFunc(src, func() { cancel(context.Cause(src)) })
		hold.OnEnd(func(err error) {
			stop()
			cancel(err)
		})
	}
	return context.WithValue(hctx, key, &held{hold: hold, src: src, count: 1})
}

// enter counts one more nested Lock, unless the hold has ended.
func (h *held) enter() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.hold.Err(); err != nil {
		return err
	}
	h.count++
	return nil
}

// exit counts one Unlock and reports whether it was the outermost.
func (h *held) exit() (last bool, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.count == 0 {
		return false, ErrNotHeld
	}
	h.count--
	return h.count == 0, nil
}

// active returns the live hold carried by ctx for key, or why there is none.
func active(ctx context.Context, key holdKey) (*seqnode.Hold, error) {
	h := lookup(ctx, key)
	if h == nil {
		return nil, fmt.Errorf("%w: %s: the context holds no such lock", ErrNotHeld, key.path)
	}
	if err := h.hold.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", key.path, err)
	}
	return h.hold, nil
}

// holds reports whether ctx carries a live hold for key.
func holds(ctx context.Context, key holdKey) bool {
	_, err := active(ctx, key)
	return err == nil
}

// release undoes one Lock of the hold carried by ctx; the outermost deletes
// the node. It reports a loss that happened while held.
func release(ctx context.Context, key holdKey) error {
	h := lookup(ctx, key)
	if h == nil {
		return fmt.Errorf("%w: %s: the context holds no such lock", ErrNotHeld, key.path)
	}
	last, err := h.exit()
	if err != nil {
		return fmt.Errorf("%w: %s: already unlocked", err, key.path)
	}
	if !last {
		if err := h.hold.Err(); err != nil {
			return fmt.Errorf("unlock %s: %w", key.path, err)
		}
		return nil
	}
	// The caller's context may be cancelled (the lock lost, a deadline):
	// the release must still happen.
	if err := h.hold.Release(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("unlock %s: %w", key.path, err)
	}
	return nil
}

// acquire re-enters the hold that ctx carries for key, or queues a new node
// with the engine. It returns the held context (see attach for src), or false
// if wait is false and the lock is taken. A ctx that has ended neither
// re-enters nor queues: the work it would guard has been abandoned.
func acquire(ctx, src context.Context, sess *recipes.Session, key holdKey, spec seqnode.Spec, wait bool) (context.Context, bool, error) {
	if err := context.Cause(ctx); err != nil {
		return nil, false, fmt.Errorf("lock %s: %w", key.path, err)
	}
	if h := lookup(ctx, key); h != nil {
		if err := h.enter(); err != nil {
			return nil, false, fmt.Errorf("lock %s: %w", key.path, err)
		}
		return ctx, true, nil
	}
	hold, ok, err := take(ctx, sess, spec, wait)
	if err != nil {
		return nil, false, fmt.Errorf("lock %s: %w", key.path, err)
	}
	if !ok {
		return nil, false, nil
	}
	return attach(ctx, src, key, hold), true, nil
}

// token returns the fencing token of the hold ctx carries for key.
func token(ctx context.Context, key holdKey) (int64, error) {
	h, err := active(ctx, key)
	if err != nil {
		return 0, err
	}
	return h.Token(), nil
}

// take is seqnode.Acquire, or TryAcquire if wait is false.
func take(ctx context.Context, sess *recipes.Session, spec seqnode.Spec, wait bool) (*seqnode.Hold, bool, error) {
	if wait {
		h, err := seqnode.Acquire(ctx, sess, spec)
		return h, err == nil, err
	}
	return seqnode.TryAcquire(ctx, sess, spec)
}

// guard returns the Multi check of the hold ctx carries for key.
func guard(ctx context.Context, key holdKey) (*zk.CheckVersionRequest, error) {
	h, err := active(ctx, key)
	if err != nil {
		return nil, err
	}
	return h.Guard(), nil
}

// revoked returns the revocation channel of the hold ctx carries for key,
// or nil.
func revoked(ctx context.Context, key holdKey) <-chan struct{} {
	h, err := active(ctx, key)
	if err != nil {
		return nil
	}
	return h.Revoked()
}

// guardedMulti runs ops after a check that the hold in ctx still exists.
func guardedMulti(ctx context.Context, sess *recipes.Session, key holdKey, ops []any) ([]zk.MultiResponse, error) {
	h, err := active(ctx, key)
	if err != nil {
		return nil, err
	}
	res, err := sess.Conn().Multi(append([]any{h.Guard()}, ops...)...)
	if len(res) > 0 && errors.Is(res[0].Error, zk.ErrNoNode) {
		return res, fmt.Errorf("multi under %s: %w: node %s is gone", key.path, ErrLockLost, h.Path())
	}
	if err != nil {
		return res, fmt.Errorf("multi under %s: %w", key.path, err)
	}
	return res[1:], nil
}
