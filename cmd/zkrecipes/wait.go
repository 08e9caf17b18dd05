package main

import (
	"context"
	"errors"
	"fmt"
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
// another recipe uses (or a semaphore with another number of leases, a
// double barrier with another number of members), 75 on
// --timeout, 130 on a signal, 69 otherwise (ZooKeeper failing, or the
// session lost).
func waitFailure(ctx context.Context, what string, err error) error {
	switch {
	case errors.Is(err, locks.ErrMaxLeases), errors.Is(err, barriers.ErrMembers), errors.Is(err, recipes.ErrOtherRecipe):
		return exitError{exitConflict, err}
	case errors.Is(context.Cause(ctx), errTimedOut):
		return exitError{exitTimeout, fmt.Errorf("timed out waiting for %s", what)}
	case ctx.Err() != nil:
		return exitError{exitInterrupted, fmt.Errorf("interrupted while waiting for %s", what)}
	case notAllowed(err):
		return exitError{exitNoPerm, fmt.Errorf("%w\n%s", err, notAllowedHint(err))}
	}
	return exitError{exitUnavailable, err}
}

// busy is the failure of a try-once (-n) that found what busy.
func busy(what string) error {
	return exitError{exitTimeout, fmt.Errorf("%s is busy (tried once)", what)}
}
