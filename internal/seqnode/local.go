package seqnode

import (
	"context"
	"slices"
	"sync"

	"github.com/zkrecipes/recipes/internal/znode"
)

// Local queueing. The goroutines of one session that take one exclusive lock
// (an Exclusive or a Gate Spec) queue in this process, first come first served,
// and at most two of them have a node in ZooKeeper at a time: the holder and
// the next in line. So ten thousand goroutines waiting for one lock cost ten
// thousand parked goroutines and two nodes, not ten thousand nodes, watches
// and listings; and the next in line is already queued in ZooKeeper when the
// holder lets go, so a hand-off within the process costs a delete and a
// notification, like one between processes.
//
// Each goroutine still creates its own node when its pass comes, at the
// back of the ZooKeeper queue: a process with many waiters gets no more than
// its place in line, and other processes are not starved.

// localInZK is how many of one session's goroutines may have a node in
// ZooKeeper for one lock at a time: the holder, and the next in line.
const localInZK = 2

// localKey names a local queue of a session: one lock. Specs with the same
// directory and lock name are one lock in ZooKeeper, whatever their data.
type localKey struct {
	dir, prefix string
}

// A localQueue gives localInZK goroutines at a time a pass to go to
// ZooKeeper, in the order they joined, and one pass at a time: the next pass
// is given once the goroutine before has created its node, so the nodes
// queue in ZooKeeper in the order the goroutines joined. A goroutine is in
// line the moment it joins, under the lock that counts it, which is what
// LocalQueued tells (x/sync's semaphore.Weighted cannot say that).
type localQueue struct {
	users    int             // goroutines in line, in ZooKeeper, or holding
	free     int             // passes not given
	waiting  []chan struct{} // in line for a pass, oldest first
	creating chan struct{}   // the pass whose node is not created yet, if any
}

// localQueues are a session's local queues that some goroutine is using; a
// queue goes when its last user leaves, so the map does not grow with locks
// used once. One lock guards them all: it is held for a few instructions at
// a time.
type localQueues struct {
	sync.Mutex
	m map[localKey]*localQueue
}

// localsKey keeps a session's localQueues in its znode.State.
type localsKey struct{}

// localsOf returns sess's local queues.
func localsOf(sess znode.Session) *localQueues {
	return znode.StateOf(sess).Value(localsKey{}, func() any {
		return &localQueues{m: map[localKey]*localQueue{}}
	}).(*localQueues)
}

// giveLocked gives the next pass, if one is free and no node is being
// created.
func (q *localQueue) giveLocked() {
	if q.free == 0 || q.creating != nil || len(q.waiting) == 0 {
		return
	}
	q.free--
	q.creating = q.waiting[0]
	q.waiting = q.waiting[1:]
	close(q.creating)
}

// join puts the calling goroutine in line for a pass on the lock and
// returns a channel that is closed when the pass comes. If wait is false and
// the pass does not come at once, it leaves and returns nil.
func (locals *localQueues) join(k localKey, wait bool) <-chan struct{} {
	locals.Lock()
	defer locals.Unlock()
	q := locals.m[k]
	if q == nil {
		q = &localQueue{free: localInZK}
		locals.m[k] = q
	}
	pass := make(chan struct{})
	q.waiting = append(q.waiting, pass)
	q.giveLocked()
	if q.creating != pass && !wait {
		q.waiting = q.waiting[:len(q.waiting)-1]
		if q.users == 0 {
			delete(locals.m, k)
		}
		return nil
	}
	q.users++
	return pass
}

// created records that the goroutine of pass has created its node (or
// failed to): the next pass may be given. Calls after the first do nothing.
func (locals *localQueues) created(k localKey, pass <-chan struct{}) {
	locals.Lock()
	defer locals.Unlock()
	if q := locals.m[k]; q != nil && q.creating == pass {
		q.creating = nil
		q.giveLocked()
	}
}

// leave takes the calling goroutine out of the queue, handing on its
// pass if it had one.
func (locals *localQueues) leave(k localKey, pass <-chan struct{}) {
	locals.Lock()
	defer locals.Unlock()
	q := locals.m[k]
	select {
	case <-pass:
		q.free++
		if q.creating == pass {
			q.creating = nil
		}
	default:
		q.waiting = slices.DeleteFunc(q.waiting, func(c chan struct{}) bool { return c == pass })
	}
	q.giveLocked()
	if q.users--; q.users == 0 {
		delete(locals.m, k)
	}
}

// queueLocally waits for this goroutine's pass, then calls run; an Acquire
// that does not wait gets errBusy unless the pass comes at once. run calls
// created when its node is created, or when it has given up creating one;
// it may call it again (after a requeue), and only the first call counts.
// The pass is handed on when the Turn run returns ends, or at once if run
// fails.
func queueLocally(ctx context.Context, sess znode.Session, spec Spec, wait bool, run func(created func()) (*Turn, error)) (*Turn, error) {
	locals, k := localsOf(sess), localKey{dir: spec.Dir, prefix: spec.Prefix}
	pass := locals.join(k, wait)
	if pass == nil {
		return nil, errBusy
	}
	select {
	case <-pass:
	default:
		queued(ctx) // others of this session are ahead
	}
	select {
	case <-pass:
	case <-ctx.Done():
		locals.leave(k, pass) // hands on a pass that came meanwhile
		return nil, znode.CtxErr(ctx)
	}
	t, err := run(func() { locals.created(k, pass) })
	if err != nil {
		locals.leave(k, pass)
		return nil, err
	}
	t.OnEnd(func(error) { locals.leave(k, pass) })
	return t, nil
}

// LocalQueued returns how many goroutines of sess are queued for the lock of
// spec in this process, the one holding it and those in ZooKeeper included.
// Tests and benchmarks use it to see that a goroutine is in line.
func LocalQueued(sess znode.Session, spec Spec) int {
	locals := localsOf(sess)
	locals.Lock()
	defer locals.Unlock()
	if q := locals.m[localKey{dir: spec.Dir, prefix: spec.Prefix}]; q != nil {
		return q.users
	}
	return 0
}
