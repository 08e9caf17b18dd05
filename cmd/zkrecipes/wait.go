package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/barriers"
	"github.com/zkrecipes/recipes/locks"
)

// errTimedOut is the cause of a context that --timeout ended.
var errTimedOut = errors.New("timed out")

// withTimeout bounds ctx by timeout, if it is not 0, with errTimedOut as the
// cause.
func withTimeout(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, timeout, errTimedOut)
}

// waitFailure maps a failed wait for what to an exit status: 65 for a path
// another recipe uses (or a semaphore with another number of leases or a
// shared count that does not exist, a double barrier with another number of
// members), 75 on
// --timeout, 130 on a signal, 69 otherwise (ZooKeeper failing, or the
// session lost).
func waitFailure(ctx context.Context, what string, err error) error {
	switch {
	case errors.Is(err, locks.ErrMaxLeases), errors.Is(err, locks.ErrNoSharedCount), errors.Is(err, barriers.ErrMembers), errors.Is(err, recipes.ErrOtherRecipe):
		return exitError{exitConflict, err}
	case errors.Is(context.Cause(ctx), errTimedOut):
		return exitError{exitTimeout, fmt.Errorf("timed out waiting for %s", what)}
	case ctx.Err() != nil:
		return exitError{exitInterrupted, fmt.Errorf("interrupted while waiting for %s", what)}
	case notAllowed(err):
		return exitError{exitNoPerm, fmt.Errorf("%w\n%s", err, notAllowedHint)}
	}
	return exitError{exitUnavailable, err}
}

// busy is the failure of a try-once (-n) that found what busy.
func busy(what string) error {
	return exitError{exitTimeout, fmt.Errorf("%s is busy (tried once)", what)}
}

// waitSaying runs lock and, if say is not nil, calls say when the
// acquisition queues (locks.WithQueued) and then every every (0: only
// then) while lock has not returned. say runs in this goroutine, lock in
// another, so that what say reads delays neither the acquisition nor its
// hand-off.
func waitSaying(ctx context.Context, lock func(context.Context) (*locks.Hold, error), every time.Duration, say func()) (*locks.Hold, error) {
	if say == nil {
		return lock(ctx)
	}
	queued := make(chan struct{})
	tell := sync.OnceFunc(func() { close(queued) })
	ctx = locks.WithQueued(ctx, tell)
	type result struct {
		h   *locks.Hold
		err error
	}
	done := make(chan result, 1)
	go func() {
		h, err := lock(ctx)
		done <- result{h, err}
	}()
	var tick <-chan time.Time
	for {
		select {
		case r := <-done:
			return r.h, r.err
		case <-queued:
			queued = nil
			if every > 0 {
				t := time.NewTicker(every)
				defer t.Stop()
				tick = t.C
			}
		case <-tick:
		}
		// Nothing to say once it holds, though the wait and the hold
		// came together.
		select {
		case r := <-done:
			return r.h, r.err
		default:
			say()
		}
	}
}
