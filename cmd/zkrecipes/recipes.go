package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/locks"
)

// lockOps is what the run-while-holding commands need of a recipe.
type lockOps struct {
	path      string                                               // as shown in messages: the path, or the multilock's paths
	lock      func(ctx context.Context) (*locks.Hold, error)       // waits
	try       func(ctx context.Context) (*locks.Hold, bool, error) // nil if the recipe cannot try
	status    func(ctx context.Context) string                     // who holds it, for the waiting line
	revocable bool                                                 // a holder can be asked to let go
}

// semaphoreSize is a semaphore's number of leases: fixed, or the shared count
// at countPath if that is not "".
type semaphoreSize struct {
	leases    int
	countPath string
}

// buildOps makes the recipe a command names.
func buildOps(name string, sess *recipes.Session, paths []string, size semaphoreSize, opts []recipes.NodeOption) (lockOps, error) {
	path := paths[0]
	status := func(ctx context.Context) string { return statusLine(ctx, sess, paths) }
	switch name {
	case "lock":
		m, err := locks.NewMutex(sess, path, opts...)
		if err != nil {
			return lockOps{}, err
		}
		return lockOps{path, m.Lock, m.TryLock, status, true}, nil
	case "wlock", "rlock":
		rw, err := locks.NewRWMutex(sess, path, opts...)
		if err != nil {
			return lockOps{}, err
		}
		if name == "rlock" {
			return lockOps{path, rw.RLock, rw.TryRLock, status, true}, nil
		}
		return lockOps{path, rw.Lock, rw.TryLock, status, true}, nil
	case "semaphore-mutex":
		m, err := locks.NewSemaphoreMutex(sess, path, opts...)
		if err != nil {
			return lockOps{}, err
		}
		return lockOps{path, m.Lock, m.TryLock, status, false}, nil
	case "semaphore":
		var sem *locks.Semaphore
		var err error
		if size.countPath != "" {
			sem, err = locks.NewSharedCountSemaphore(sess, path, size.countPath, opts...)
		} else {
			sem, err = locks.NewSemaphore(sess, path, size.leases, opts...)
		}
		if err != nil {
			return lockOps{}, err
		}
		lock := func(ctx context.Context) (*locks.Hold, error) {
			ls, err := sem.Acquire(ctx, 1)
			if err != nil {
				return nil, err
			}
			return ls[0], nil
		}
		try := func(ctx context.Context) (*locks.Hold, bool, error) {
			ls, ok, err := sem.TryAcquire(ctx, 1)
			if err != nil || !ok {
				return nil, false, err
			}
			return ls[0], true, nil
		}
		return lockOps{path, lock, try, status, false}, nil
	case "multilock":
		ml, err := locks.NewMultiMutex(sess, paths, opts...)
		if err != nil {
			return lockOps{}, err
		}
		return lockOps{ml.Path(), ml.Lock, nil, status, false}, nil
	}
	return lockOps{}, fmt.Errorf("unknown recipe %q", name)
}

// fencingTokens lists each lock of h with its token, "path=token,...": a
// multi-lock's members, or h itself.
func fencingTokens(h *locks.Hold) string {
	parts := h.Members()
	if parts == nil {
		parts = []*locks.Hold{h}
	}
	pairs := make([]string, len(parts))
	for i, p := range parts {
		pairs[i] = p.Path() + "=" + strconv.FormatInt(p.Token(), 10)
	}
	return strings.Join(pairs, ",")
}

// tokenLabel names h's fencing token for a status line: "fencing token N",
// or a multi-lock's members' ("fencing tokens PATH=N,..."), as its own
// Token is no fence.
func tokenLabel(h *locks.Hold) string {
	if h.Members() == nil {
		return "fencing token " + strconv.FormatInt(h.Token(), 10)
	}
	return "fencing tokens " + fencingTokens(h)
}

// statusLine describes who holds the locks at paths, for a waiting line.
// Nodes of the session itself are left out: a multi-lock waiting for one
// path holds others, and is not what it waits for. A semaphore with no lease
// held is waiting behind an acquirer at its gate, which it names.
func statusLine(ctx context.Context, sess *recipes.Session, paths []string) string {
	var parts []string
	for _, p := range paths {
		in, err := describe(ctx, sess, p)
		if err != nil {
			continue
		}
		own := fmt.Sprintf("%#x", sess.ID())
		others := func(nodes []inspected) []inspected {
			return slices.DeleteFunc(slices.Clone(nodes), func(n inspected) bool { return n.Session == own })
		}
		holders, waiters := others(in.Holders), others(in.Waiters)
		var s string
		switch {
		case len(holders) > 0:
			var who []string
			for _, h := range holders {
				who = append(who, h.Data)
			}
			s = fmt.Sprintf("held by %s (for %s)", strings.Join(who, ", "), holders[0].age)
		case in.Type == "semaphore" && len(waiters) > 0:
			s = fmt.Sprintf("no lease held, %s taking one (for %s)", waiters[0].Data, waiters[0].age)
			waiters = waiters[1:]
		default:
			continue
		}
		if len(paths) > 1 {
			s = p + " " + s
		}
		if len(waiters) > 0 {
			s += fmt.Sprintf(", %d waiting", len(waiters))
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return ""
	}
	return ", " + strings.Join(parts, "; ")
}
