package locks

import (
	"context"
	"fmt"
	"time"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/seqnode"
	"github.com/zkrecipes/recipes/internal/znode"
)

// holdKey finds a lock's hold in a context. Locks of one kind on one path in
// one session share a key, so a nested Lock re-enters even through another
// value of the same lock.
type holdKey struct {
	kind string
	sess *recipes.Session
	path string
}

// what names the acquire of key in its errors: "lock /p".
func (k holdKey) what() string { return "lock " + k.path }

// multiKey finds a MultiLock's hold in a context. It is the MultiLock value:
// another MultiLock over the same locks re-enters each member instead.
type multiKey struct{ ml *MultiLock }

// enter counts one more nested acquire, unless the hold has ended or its
// outermost Release has begun.
func (h *Hold) enter() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return h.err
	}
	if h.count == 0 {
		return ErrReleased
	}
	h.count++
	return nil
}

// carrying returns the hold ctx carries under key, if any.
func carrying(ctx context.Context, key any) *Hold {
	h, _ := ctx.Value(key).(*Hold)
	return h
}

// carriesLive reports whether ctx carries a live hold under key.
func carriesLive(ctx context.Context, key any) bool {
	h := carrying(ctx, key)
	return h != nil && h.Err() == nil
}

// How an acquire takes its node: it waits for its turn (Lock, Acquire), or
// gives up at once if the lock is not free (TryLock, TryAcquire).
type how int

const (
	waitTurn how = iota
	tryOnce
)

// acquire re-enters the hold ctx carries for key, or takes a new node as w
// says; its errors say what it was doing. It returns false if tryOnce found
// the lock busy.
func acquire(ctx context.Context, sess *recipes.Session, key holdKey, what string, spec seqnode.Spec, w how) (*Hold, bool, error) {
	// A ctx that has ended neither re-enters nor queues: the work it
	// would guard has been abandoned.
	if err := znode.CtxErr(ctx); err != nil {
		return nil, false, fmt.Errorf("%s: %w", what, err)
	}
	if h := carrying(ctx, key); h != nil {
		if err := h.enter(); err != nil {
			return nil, false, fmt.Errorf("%s: %w", what, err)
		}
		return h, true, nil
	}
	start := time.Now()
	turn, ok, err := seqnode.Acquire(seqnode.OneAcquisition(ctx), sess, spec, w == waitTurn)
	znode.Of(sess).Recorder().Acquisition(ctx, key.kind, key.path, start, ok, err)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", what, err)
	}
	if !ok {
		return nil, false, nil
	}
	return newHold(ctx, key, key.path, sess, turn), true, nil
}
