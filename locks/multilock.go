package locks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/seqnode"
	"github.com/zkrecipes/recipes/internal/znode"
)

// A MultiLock holds several locks as one: Curator's InterProcessMultiLock,
// made safe against deadlock, and asking for its members at once. It orders
// its members by their paths, whatever order they were given in, and never
// holds one while it waits for one before it in that order, so two
// MultiLocks over the same locks cannot each hold what the other waits for
// (see Lock). It takes all or none: if one member fails, the ones already
// taken are released. The context given to Lock bounds the whole
// acquisition (one deadline, not one per member).
//
// Lock returns one Hold for all the members: it ends when any of them is
// lost, its Guard checks them all, and Members gives each member's own Hold,
// with the member's fencing token. The Hold's own Token is 0: no one number
// fences every member (see Hold.Token). A MultiLock is itself a Locker.
type MultiLock struct {
	members []Locker // in path order
}

// NewMultiLock returns a lock over members. A member that is itself a
// MultiLock gives its members instead, so that one order covers every lock
// taken. It refuses, with an error wrapping recipes.ErrInvalid, an empty list, a nil
// member, and two members with the same path (which would deadlock on each
// other, or upgrade a read lock).
//
// The order is that of the members' paths in ZooKeeper (under the session's
// chroot, for this package's locks), so processes whose sessions have
// different chroots still take the same locks in the same order.
func NewMultiLock(members ...Locker) (*MultiLock, error) {
	if len(members) == 0 {
		return nil, fmt.Errorf("%w: a multi-lock needs at least one lock", recipes.ErrInvalid)
	}
	if i := slices.IndexFunc(members, isNil); i >= 0 {
		return nil, fmt.Errorf("%w: lock %d of a multi-lock is nil (%T)", recipes.ErrInvalid, i, members[i])
	}
	var flat []Locker
	for _, m := range members {
		if ml, ok := m.(*MultiLock); ok {
			flat = append(flat, ml.members...)
		} else {
			flat = append(flat, m)
		}
	}
	slices.SortStableFunc(flat, func(a, b Locker) int { return cmp.Compare(orderKey(a), orderKey(b)) })
	for i := 1; i < len(flat); i++ {
		if orderKey(flat[i]) == orderKey(flat[i-1]) {
			return nil, fmt.Errorf("%w: %s appears twice in a multi-lock", recipes.ErrInvalid, flat[i].Path())
		}
	}
	return &MultiLock{members: flat}, nil
}

// orderKey is what a multi-lock orders a member by: its path in ZooKeeper
// for this package's locks, else its Path.
func orderKey(l Locker) string {
	if z, ok := l.(interface{ zkPath() string }); ok {
		return z.zkPath()
	}
	return l.Path()
}

// isNil reports whether l is nil, or an interface holding a nil pointer (a
// nil *Mutex), whose methods would panic.
func isNil(l Locker) bool {
	if l == nil {
		return true
	}
	v := reflect.ValueOf(l)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// NewMultiMutex returns a MultiLock over a Mutex at each path (Curator's
// path-list constructor).
func NewMultiMutex(sess *recipes.Session, paths []string, opts ...recipes.NodeOption) (*MultiLock, error) {
	members := make([]Locker, len(paths))
	for i, p := range paths {
		m, err := NewMutex(sess, p, opts...)
		if err != nil {
			return nil, err
		}
		members[i] = m
	}
	return NewMultiLock(members...)
}

// Path returns the members' paths in the order they are taken, joined by
// commas.
func (ml *MultiLock) Path() string {
	paths := make([]string, len(ml.members))
	for i, m := range ml.members {
		paths[i] = m.Path()
	}
	return strings.Join(paths, ",")
}

// Lock takes every member and returns one Hold over them all (see
// Hold.Members for each member's, in path order). It asks for all the
// members at once, so that a multi-lock whose members are free is held
// after one round trip. When a member is busy, Lock keeps the members
// before it, withdraws those after it (releasing those it got, taking
// those that queued out of their lines), waits in that member's line, and
// goes on from there the same way: it never holds a member while it waits
// for one before it in path order, so two multi-locks cannot each hold what
// the other waits for. If
// one fails, a member already taken is lost, or ctx ends, the members
// already taken are released and the error says which member failed. ctx
// bounds the whole wait, and only the wait.
//
// If ctx carries a Hold of this MultiLock, Lock re-enters it, as
// Mutex.Lock does. The Hold's Context also carries each member's Hold, so a
// member locked with it re-enters that member.
func (ml *MultiLock) Lock(ctx context.Context) (*Hold, error) {
	if err := args.Context(ctx, "locks: MultiLock.Lock"); err != nil {
		return nil, err
	}
	key := multiKey{ml}
	path := ml.Path()
	if err := znode.CtxErr(ctx); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if h := carrying(ctx, key); h != nil {
		if err := h.enter(); err != nil {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		return h, nil
	}
	// Losing a member ends the wait for the next ones.
	wctx, cancel := context.WithCancelCause(seqnode.OneAcquisition(ctx))
	defer cancel(nil)
	held := make([]*Hold, 0, len(ml.members))
	keep := func(h *Hold) (stop func() bool) {
		held = append(held, h)
		return h.whenEnded(func(err error) { cancel(fmt.Errorf("%s: %w", h.path, err)) })
	}
	fail := func(err error) (*Hold, error) {
		return nil, errors.Join(err, releaseAll(context.Background(), held))
	}
	for len(held) < len(ml.members) {
		if rest := ml.members[len(held):]; len(rest) == 1 || !ownLock(rest[0]) {
			// The last member left, with nothing after it to
			// withdraw, or a Locker of the user's: taken alone.
			h, err := rest[0].Lock(wctx)
			if err != nil {
				return fail(fmt.Errorf("multi-lock: take %s: %w", rest[0].Path(), err))
			}
			defer keep(h)()
			continue
		}
		got, next, err := lockAll(wctx, ml.members[len(held):])
		for _, h := range got {
			defer keep(h)()
		}
		if err != nil {
			return fail(err)
		}
		if next == nil {
			continue
		}
		seqnode.Queued(wctx)
		r := <-next.done
		next.cancel(nil)
		if r.err != nil {
			return fail(fmt.Errorf("multi-lock: take %s: %w", next.m.Path(), r.err))
		}
		defer keep(r.h)()
	}
	// A member lost after it was taken, or ctx ended, as the last one came:
	// no hold that has ended already, and none for an ended ctx.
	if err := znode.CtxErr(wctx); err != nil {
		return fail(fmt.Errorf("multi-lock: %w", err))
	}
	return newMultiHold(ctx, key, path, held), nil
}

// A started is one member's Lock under way, made without the caller's
// queued function and telling instead when it waits.
type started struct {
	m      Locker
	cancel context.CancelCauseFunc
	queued chan struct{} // closed once it waits
	done   chan lockResult
}

type lockResult struct {
	h   *Hold
	err error
}

// errWithdrawn ends the Lock of a member after one the multi-lock waits for.
var errWithdrawn = errors.New("multi-lock: withdrawn while an earlier member is waited for")

func startLock(ctx context.Context, m Locker) *started {
	s := &started{m: m, queued: make(chan struct{}), done: make(chan lockResult, 1)}
	tell := sync.OnceFunc(func() { close(s.queued) })
	mctx, cancel := context.WithCancelCause(seqnode.WithQueued(seqnode.WithoutQueued(ctx), tell))
	s.cancel = cancel
	go func() {
		h, err := m.Lock(mctx)
		s.done <- lockResult{h, err}
	}()
	return s
}

// lockAll starts the Lock of every member that tells when it waits (this
// package's locks), up to the first that does not (a Locker of the
// user's), all at once, so that their requests go out together. Once each
// has held, failed or queued, it returns the holds of those held before the
// first that did not, in order, and that one if it queued, its Lock under
// way; it withdraws every member after it, a queued
// one leaving its line and a held one being released, so that nothing is
// held out of turn while it waits. The error is any member's, rather than a
// wait.
func lockAll(ctx context.Context, members []Locker) (got []*Hold, next *started, err error) {
	n := slices.IndexFunc(members, func(l Locker) bool { return !ownLock(l) })
	if n < 0 {
		n = len(members)
	}
	all := make([]*started, n)
	results := make([]*lockResult, n) // nil: queued
	for i, m := range members[:n] {
		all[i] = startLock(ctx, m)
	}
	for i, s := range all {
		select {
		case r := <-s.done:
			results[i] = &r
		case <-s.queued:
		}
	}
	first := slices.IndexFunc(results, func(r *lockResult) bool { return r == nil || r.err != nil })
	if first < 0 {
		first = n
	}
	var back []*Hold
	var errs []error
	for i := first + 1; i < n; i++ {
		if r := results[i]; r != nil && r.err != nil {
			errs = append(errs, fmt.Errorf("multi-lock: take %s: %w", members[i].Path(), r.err))
		}
		all[i].cancel(errWithdrawn)
		r := results[i]
		if r == nil {
			got := <-all[i].done
			r = &got
		}
		if r.h != nil {
			back = append(back, r.h)
		}
	}
	// A member given back that was lost meanwhile, or whose delete the
	// session finishes after ctx ends, is no failure of this acquisition.
	_ = releaseAll(ctx, back)
	for i := range min(first, n) {
		all[i].cancel(nil)
		got = append(got, results[i].h)
	}
	if first == n {
		return got, nil, errors.Join(errs...)
	}
	if r := results[first]; r != nil {
		all[first].cancel(nil)
		errs = append([]error{fmt.Errorf("multi-lock: take %s: %w", members[first].Path(), r.err)}, errs...)
		return got, nil, errors.Join(errs...)
	}
	if len(errs) > 0 {
		all[first].cancel(errWithdrawn)
		if r := <-all[first].done; r.h != nil {
			_ = releaseAll(ctx, []*Hold{r.h})
		}
		return got, nil, errors.Join(errs...)
	}
	return got, all[first], nil
}

// ownLock reports whether l is one of this package's locks, whose Lock
// tells when it waits (WithQueued): any but a Locker of the user's.
func ownLock(l Locker) bool {
	switch l.(type) {
	case *Mutex, *RWMutex, readLocker, *SemaphoreMutex:
		return true
	}
	return false
}
