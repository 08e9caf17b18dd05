// Package testkit is a service's code and its tests, in a module of their
// own as a user's would be: the tests run a real ZooKeeper with
// github.com/zkrecipes/recipes/zktest and break it under the code.
package testkit

import (
	"context"
	"fmt"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/locks"
)

// RunExclusive runs job while it holds the lock at path, and releases the
// lock after. job's context ends if the lock is lost meanwhile, and
// RunExclusive then returns the loss (locks.ErrLockLost).
func RunExclusive(ctx context.Context, sess *recipes.Session, path string, job func(context.Context) error) error {
	m, err := locks.NewMutex(sess, path)
	if err != nil {
		return err
	}
	held, err := m.Lock(ctx)
	if err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	jobErr := job(held.Context())
	if err := held.Release(context.WithoutCancel(ctx)); err != nil {
		return err // the loss, if the lock was lost while job ran
	}
	return jobErr
}
