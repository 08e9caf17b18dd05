package locks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/seqnode"
	"github.com/zkrecipes/recipes/internal/znode"
)

// A MultiLock holds several locks as one: Curator's InterProcessMultiLock,
// made safe against deadlock. It takes its members in the order of their
// paths, whatever order they were given in, so two MultiLocks over the same
// locks always take them in the same order and cannot each hold what the
// other waits for. It takes all or none: if one member fails, the ones
// already taken are released. The context given to Lock bounds the whole
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

// Lock takes every member in path order and returns one Hold over them all
// (see Hold.Members for each member's). If one fails, a member already taken
// is lost, or ctx ends, the members already taken are released in reverse
// order and the error says which member failed. ctx bounds the whole wait,
// and only the wait.
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
	members := make([]*Hold, 0, len(ml.members))
	for _, m := range ml.members {
		h, err := m.Lock(wctx)
		if err != nil {
			err = fmt.Errorf("multi-lock: take %s: %w", m.Path(), err)
			return nil, errors.Join(err, releaseAll(context.Background(), members))
		}
		stop := h.whenEnded(func(err error) { cancel(fmt.Errorf("%s: %w", h.path, err)) })
		defer stop()
		members = append(members, h)
	}
	// A member lost after it was taken, or ctx ended, as the last one came:
	// no hold that has ended already, and none for an ended ctx.
	if err := znode.CtxErr(wctx); err != nil {
		return nil, errors.Join(fmt.Errorf("multi-lock: %w", err), releaseAll(context.Background(), members))
	}
	return newMultiHold(ctx, key, path, members), nil
}
