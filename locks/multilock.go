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
// members at once
// (TryLock), so that a multi-lock whose members are free is held after one
// round trip. When a member is busy, Lock keeps the members before it,
// gives back those after it, waits for it, and goes on from there the same
// way: it never holds a member while it waits for one before it in path
// order, so two multi-locks cannot each hold what the other waits for. If
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
		if rest := ml.members[len(held):]; len(rest) > 1 {
			// The last member left is taken with Lock: nothing after
			// it is there to give back.
			got, err := tryAll(wctx, rest)
			for _, h := range got {
				defer keep(h)()
			}
			if err != nil {
				return fail(err)
			}
			if len(held) == len(ml.members) {
				break
			}
		}
		next := ml.members[len(held)]
		h, err := next.Lock(wctx)
		if err != nil {
			return fail(fmt.Errorf("multi-lock: take %s: %w", next.Path(), err))
		}
		defer keep(h)()
	}
	// A member lost after it was taken, or ctx ended, as the last one came:
	// no hold that has ended already, and none for an ended ctx.
	if err := znode.CtxErr(wctx); err != nil {
		return fail(fmt.Errorf("multi-lock: %w", err))
	}
	return newMultiHold(ctx, key, path, held), nil
}

// tryOf returns l's TryLock if l is one of this package's locks that can
// be tried (Mutex, RWMutex and its RLocker, SemaphoreMutex), else nil:
// a Locker of the user's, even one with a TryLock of its own, which might
// wait, is waited for in turn.
func tryOf(l Locker) func(context.Context) (*Hold, bool, error) {
	switch m := l.(type) {
	case *Mutex:
		return m.TryLock
	case *RWMutex:
		return m.TryLock
	case readLocker:
		return m.rw.TryRLock
	case *SemaphoreMutex:
		return m.TryLock
	}
	return nil
}

// tryAll asks for members that can be tried (tryOf), up to the first that
// cannot, all at once, and returns the holds of those taken before the
// first that was not, in order. It gives back those taken after it, within
// ctx: held out of turn, they could deadlock. Any try's error, rather than
// a busy lock, is returned, once every hold after the first is given back.
func tryAll(ctx context.Context, members []Locker) ([]*Hold, error) {
	n := slices.IndexFunc(members, func(l Locker) bool { return tryOf(l) == nil })
	if n < 0 {
		n = len(members)
	}
	holds := make([]*Hold, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, m := range members[:n] {
		wg.Go(func() {
			h, ok, err := tryOf(m)(ctx)
			switch {
			case err != nil:
				errs[i] = fmt.Errorf("multi-lock: take %s: %w", m.Path(), err)
			case ok:
				holds[i] = h
			}
		})
	}
	wg.Wait()
	first := slices.IndexFunc(holds, func(h *Hold) bool { return h == nil })
	if first < 0 {
		return holds, nil
	}
	var back []*Hold
	for _, h := range holds[first+1:] {
		if h != nil {
			back = append(back, h)
		}
	}
	// A member given back that was lost meanwhile, or whose delete the
	// session finishes after ctx ends, is no failure of this acquisition.
	_ = releaseAll(ctx, back)
	return holds[:first], errors.Join(errs...)
}
