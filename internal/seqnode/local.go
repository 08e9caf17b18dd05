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

func newLocalQueues() any { return &localQueues{m: map[localKey]*localQueue{}} }

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

// A pass is one goroutine's place in a local queue, from join to leave.
type pass struct {
	locals *localQueues
	k      localKey
	ch     chan struct{} // closed when the pass comes
}

// join puts the calling goroutine in line for a pass on the lock of spec,
// and waits for it. An Acquire that does not wait gets errBusy unless the
// pass comes at once. The pass is handed on by leave,
// which its holder must call once it is done: when its Turn ends, or at
// once if it fails.
func join(ctx context.Context, sess znode.Session, spec Spec, wait bool) (*pass, error) {
	locals := znode.Of(sess).State().Value(localsKey{}, newLocalQueues).(*localQueues)
	p := &pass{locals: locals, k: localKey{dir: spec.Dir, prefix: spec.Prefix}, ch: make(chan struct{})}
	locals.Lock()
	q := locals.m[p.k]
	if q == nil {
		q = &localQueue{free: localInZK}
		locals.m[p.k] = q
	}
	q.waiting = append(q.waiting, p.ch)
	q.giveLocked()
	if q.creating != p.ch && !wait {
		q.waiting = q.waiting[:len(q.waiting)-1]
		if q.users == 0 {
			delete(locals.m, p.k)
		}
		locals.Unlock()
		return nil, errBusy
	}
	q.users++
	locals.Unlock()
	select {
	case <-p.ch:
		return p, nil
	default:
		queued(ctx) // others of this session are ahead
	}
	select {
	case <-p.ch:
		return p, nil
	case <-ctx.Done():
		p.leave() // hands on a pass that came meanwhile
		return nil, znode.CtxErr(ctx)
	}
}

// created records that the goroutine of the pass has created its node (or
// failed to): the next pass may be given. Calls after the first do nothing,
// and so does a call on a nil pass (a lock not queued locally).
func (p *pass) created() {
	if p == nil {
		return
	}
	p.locals.Lock()
	defer p.locals.Unlock()
	if q := p.locals.m[p.k]; q != nil && q.creating == p.ch {
		q.creating = nil
		q.giveLocked()
	}
}

// leave takes the pass's goroutine out of the queue, handing on its
// pass if it had one.
func (p *pass) leave() {
	p.locals.Lock()
	defer p.locals.Unlock()
	q := p.locals.m[p.k]
	select {
	case <-p.ch:
		q.free++
		if q.creating == p.ch {
			q.creating = nil
		}
	default:
		q.waiting = slices.DeleteFunc(q.waiting, func(c chan struct{}) bool { return c == p.ch })
	}
	q.giveLocked()
	if q.users--; q.users == 0 {
		delete(p.locals.m, p.k)
	}
}

// LocalQueued returns how many goroutines of sess are queued for the lock of
// spec in this process, the one holding it and those in ZooKeeper included.
// Tests and benchmarks use it to see that a goroutine is in line.
func LocalQueued(sess znode.Session, spec Spec) int {
	locals := znode.Of(sess).State().Value(localsKey{}, newLocalQueues).(*localQueues)
	locals.Lock()
	defer locals.Unlock()
	if q := locals.m[localKey{dir: spec.Dir, prefix: spec.Prefix}]; q != nil {
		return q.users
	}
	return 0
}
