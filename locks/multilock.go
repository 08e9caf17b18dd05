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
)

// A MultiLock holds several locks as one: Curator's InterProcessMultiLock,
// made safe against deadlock. It takes its members in the order of their
// paths, whatever order they were given in, so two MultiLocks over the same
// locks always take them in the same order and cannot each hold what the
// other waits for. It takes all or none: if one member fails, the ones
// already taken are released. The context given to Lock bounds the whole
// acquisition (one deadline, not one per member).
//
// Ownership travels in the context as for the members themselves: the held
// context Lock returns carries every member's hold, and is cancelled when any
// of them is lost. A MultiLock is itself a Locker.
type MultiLock struct {
	members []Locker // in path order
}

// NewMultiLock returns a lock over members. It refuses, with an error
// wrapping ErrInvalid, an empty list, a nil member, and two members with the
// same path (which would deadlock on each other, or upgrade a read lock).
func NewMultiLock(members ...Locker) (*MultiLock, error) {
	if len(members) == 0 {
		return nil, fmt.Errorf("%w: a multi-lock needs at least one lock", ErrInvalid)
	}
	if i := slices.IndexFunc(members, isNil); i >= 0 {
		return nil, fmt.Errorf("%w: lock %d of a multi-lock is nil (%T)", ErrInvalid, i, members[i])
	}
	sorted := slices.Clone(members)
	slices.SortStableFunc(sorted, func(a, b Locker) int { return cmp.Compare(a.Path(), b.Path()) })
	for i := 1; i < len(sorted); i++ {
		if sorted[i].Path() == sorted[i-1].Path() {
			return nil, fmt.Errorf("%w: %s appears twice in a multi-lock", ErrInvalid, sorted[i].Path())
		}
	}
	return &MultiLock{members: sorted}, nil
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
func NewMultiMutex(sess *recipes.Session, paths []string, opts ...Option) (*MultiLock, error) {
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

// Lock takes every member in path order and returns the context that holds
// them all. If one fails, or ctx ends, the members already taken are released
// in reverse order and the error says which member failed.
func (ml *MultiLock) Lock(ctx context.Context) (context.Context, error) {
	held := ctx
	for i, m := range ml.members {
		h, err := m.Lock(held)
		if err != nil {
			err = fmt.Errorf("multi-lock: take %s: %w", m.Path(), err)
			return nil, errors.Join(err, ml.unlock(held, i))
		}
		held = h
	}
	return held, nil
}

// Unlock releases every member held by ctx, in reverse path order. It goes on
// past a member that fails to release, and returns all the failures, each
// naming its member; a member whose release failed may still be held.
func (ml *MultiLock) Unlock(ctx context.Context) error {
	return ml.unlock(ctx, len(ml.members))
}

// unlock releases the first n members, last first.
func (ml *MultiLock) unlock(ctx context.Context, n int) error {
	var errs []error
	for i := n - 1; i >= 0; i-- {
		if err := ml.members[i].Unlock(ctx); err != nil {
			errs = append(errs, fmt.Errorf("multi-lock: release %s: %w", ml.members[i].Path(), err))
		}
	}
	return errors.Join(errs...)
}

var _ Locker = (*MultiLock)(nil)
