package seqnode

import (
	"context"
	"sync"
)

// Telling a caller that its acquisition waits. A command line that says
// "waiting for …" must say it when, and only when, it waits, and must not
// find out by trying first: a try creates a node and deletes it, and between
// the try and the wait the caller is in no queue, so a later arrival can get
// ahead of it. So the caller puts a function in the acquisition's context
// (WithQueued), and the engine calls it once the acquisition has its place
// in line and the lock is not its own yet: in acquire, when the first
// listing shows others ahead of our node, which exists by then; in join,
// when other goroutines of the session are ahead in the process.

// queuedKey carries, in a context, the function that WithQueued put there.
type queuedKey struct{}

// WithQueued returns a copy of ctx whose acquisitions call queued when they
// wait, and then whatever function ctx carried already (as
// net/http/httptrace composes its hooks). Every acquisition that waits
// calls it; OneAcquisition makes the calls of one acquisition that waits
// more than once (a semaphore at its gate and then for a lease, a
// multi-lock for each busy member) one.
func WithQueued(ctx context.Context, queued func()) context.Context {
	if outer, _ := ctx.Value(queuedKey{}).(func()); outer != nil {
		inner := queued
		queued = func() { inner(); outer() }
	}
	return context.WithValue(ctx, queuedKey{}, queued)
}

// WithoutQueued returns ctx without the function WithQueued put there, if
// it carries one: a locks.Hold's work is no acquisition.
func WithoutQueued(ctx context.Context) context.Context {
	if f, _ := ctx.Value(queuedKey{}).(func()); f == nil {
		return ctx
	}
	return context.WithValue(ctx, queuedKey{}, nil)
}

// OneAcquisition returns ctx with its queued function, if it has one,
// called at most once through the returned context.
func OneAcquisition(ctx context.Context) context.Context {
	f, _ := ctx.Value(queuedKey{}).(func())
	if f == nil {
		return ctx
	}
	return context.WithValue(ctx, queuedKey{}, sync.OnceFunc(f))
}

// Queued tells ctx's caller, if it asked (WithQueued), that the
// acquisition waits: for an acquisition made of others (a multi-lock's),
// once it knows which of them it waits for, each of them made without the
// caller's function (WithoutQueued).
func Queued(ctx context.Context) { queued(ctx) }

// queued tells ctx's caller, if it asked (WithQueued), that the acquisition
// waits. It runs in the acquiring goroutine, before the wait.
func queued(ctx context.Context) {
	if f, _ := ctx.Value(queuedKey{}).(func()); f != nil {
		f()
	}
}
