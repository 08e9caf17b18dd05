package locks

import (
	"context"
	"fmt"
	"time"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/seqnode"
	"github.com/zkrecipes/recipes/internal/telemetry"
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

// recordAcquisition has the session's telemetry record an acquisition of
// recipe at path, begun at start, that returned ok and err.
func recordAcquisition(ctx context.Context, sess *recipes.Session, recipe, path string, start time.Time, ok bool, err error) {
	result := telemetry.Acquired
	switch {
	case err != nil && ctx.Err() != nil:
		result = telemetry.Canceled
	case err != nil:
		result = telemetry.Failed
	case !ok:
		result = telemetry.Busy
	}
	znode.RecorderOf(sess).Acquisition(ctx, recipe, path, result, start, err)
}

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

// reenter returns the hold ctx carries under key, counting one more acquire,
// and reports whether it carries one. A ctx that has ended neither re-enters
// nor queues: the work it would guard has been abandoned.
func reenter(ctx context.Context, key any, what string) (*Hold, bool, error) {
	if err := znode.CtxErr(ctx); err != nil {
		return nil, true, fmt.Errorf("%s: %w", what, err)
	}
	h := carrying(ctx, key)
	if h == nil {
		return nil, false, nil
	}
	if err := h.enter(); err != nil {
		return nil, true, fmt.Errorf("%s: %w", what, err)
	}
	return h, true, nil
}

// acquire re-enters the hold ctx carries for key, or takes a new node as w
// says; its errors say what it was doing. It returns false if tryOnce found
// the lock busy.
func acquire(ctx context.Context, sess *recipes.Session, key holdKey, what string, spec seqnode.Spec, w how) (*Hold, bool, error) {
	if h, found, err := reenter(ctx, key, what); found {
		return h, err == nil, err
	}
	start := time.Now()
	turn, ok, err := seqnode.Acquire(seqnode.OneAcquisition(ctx), sess, spec, w == waitTurn)
	recordAcquisition(ctx, sess, key.kind, key.path, start, ok, err)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", what, err)
	}
	if !ok {
		return nil, false, nil
	}
	return newHold(ctx, key, key.path, sess, turn), true, nil
}
