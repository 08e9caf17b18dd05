package main

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/locks"
)

// lockOps is what the run-while-holding commands need of a recipe.
type lockOps struct {
	path    string // as shown in messages: the path, or the multilock's paths
	lock    func(ctx context.Context, wait bool) (context.Context, bool, error)
	unlock  func(held context.Context) error
	token   func(held context.Context) (int64, error)  // nil if there is no single token
	status  func(ctx context.Context) string           // who holds it, for the waiting line
	revoked func(held context.Context) <-chan struct{} // nil if it cannot be revoked
}

// tryOrWait adapts a Lock/TryLock pair.
func tryOrWait(lock func(context.Context) (context.Context, error), try func(context.Context) (context.Context, bool, error)) func(context.Context, bool) (context.Context, bool, error) {
	return func(ctx context.Context, wait bool) (context.Context, bool, error) {
		if !wait && try != nil {
			return try(ctx)
		}
		held, err := lock(ctx)
		return held, err == nil, err
	}
}

// buildOps makes the recipe a command names.
func buildOps(name string, sess *recipes.Session, paths []string, leases int, opts []locks.Option) (lockOps, error) {
	path := paths[0]
	status := func(ctx context.Context) string { return statusLine(ctx, sess, paths) }
	switch name {
	case "lock":
		m, err := locks.NewMutex(sess, path, opts...)
		if err != nil {
			return lockOps{}, err
		}
		return lockOps{path, tryOrWait(m.Lock, m.TryLock), m.Unlock, m.Token, status, m.Revoked}, nil
	case "wlock", "rlock":
		rw, err := locks.NewRWMutex(sess, path, opts...)
		if err != nil {
			return lockOps{}, err
		}
		if name == "rlock" {
			return lockOps{path, tryOrWait(rw.RLock, rw.TryRLock), rw.RUnlock, rw.Token, status, rw.Revoked}, nil
		}
		return lockOps{path, tryOrWait(rw.Lock, rw.TryLock), rw.Unlock, rw.Token, status, rw.Revoked}, nil
	case "semaphore-mutex":
		m, err := locks.NewSemaphoreMutex(sess, path, opts...)
		if err != nil {
			return lockOps{}, err
		}
		return lockOps{path, tryOrWait(m.Lock, m.TryLock), m.Unlock, m.Token, status, nil}, nil
	case "semaphore":
		sem, err := locks.NewSemaphore(sess, path, leases, opts...)
		if err != nil {
			return lockOps{}, err
		}
		return semaphoreOps(sem, status), nil
	case "multilock":
		ml, err := locks.NewMultiMutex(sess, paths, opts...)
		if err != nil {
			return lockOps{}, err
		}
		return lockOps{ml.Path(), tryOrWait(ml.Lock, nil), ml.Unlock, nil, status, nil}, nil
	}
	return lockOps{}, fmt.Errorf("unknown recipe %q", name)
}

// semaphoreOps holds one lease of sem. The held context ends when the lease
// is lost or released.
func semaphoreOps(sem *locks.Semaphore, status func(context.Context) string) lockOps {
	type lease struct {
		l    *locks.Lease
		stop func() // stops following the lease and cancels the held context
	}
	var mu sync.Mutex // guards byCtx
	byCtx := map[context.Context]lease{}
	find := func(held context.Context, remove bool) (lease, bool) {
		mu.Lock()
		defer mu.Unlock()
		le, ok := byCtx[held]
		if remove {
			delete(byCtx, held)
		}
		return le, ok
	}
	return lockOps{
		path: sem.Path(),
		lock: func(ctx context.Context, wait bool) (context.Context, bool, error) {
			var ls []*locks.Lease
			var err error
			ok := true
			if wait {
				ls, err = sem.Acquire(ctx, 1)
			} else {
				ls, ok, err = sem.TryAcquire(ctx, 1)
			}
			if err != nil || !ok {
				return nil, false, err
			}
			held, cancel := context.WithCancelCause(ctx)
			l, quit, done := ls[0], make(chan struct{}), make(chan struct{})
			go func() {
				defer close(done)
				select {
				case <-l.Done():
					cancel(l.Err())
				case <-quit:
				}
			}()
			stop := func() {
				close(quit)
				<-done
				cancel(locks.ErrReleased)
			}
			mu.Lock()
			byCtx[held] = lease{l, stop}
			mu.Unlock()
			return held, true, nil
		},
		unlock: func(held context.Context) error {
			le, ok := find(held, true)
			if !ok {
				return locks.ErrNotHeld
			}
			err := le.l.Release(context.Background())
			le.stop()
			return err
		},
		token: func(held context.Context) (int64, error) {
			le, ok := find(held, false)
			if !ok {
				return 0, locks.ErrNotHeld
			}
			return le.l.Token(held)
		},
		status: status,
	}
}

// statusLine describes who holds the locks at paths, for a waiting line.
func statusLine(ctx context.Context, sess *recipes.Session, paths []string) string {
	var parts []string
	for _, p := range paths {
		in, err := describe(ctx, sess, p)
		if err != nil || len(in.Holders) == 0 {
			continue
		}
		var who []string
		for _, h := range in.Holders {
			who = append(who, h.Data)
		}
		s := fmt.Sprintf("held by %s (queued %.1fs ago)", strings.Join(who, ", "), in.Holders[0].Age)
		if len(paths) > 1 {
			s = p + " " + s
		}
		if len(in.Waiters) > 0 {
			s += fmt.Sprintf(", %d waiting", len(in.Waiters))
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return ""
	}
	return ", " + strings.Join(parts, "; ")
}
