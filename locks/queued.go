package locks

import (
	"context"

	"github.com/zkrecipes/recipes/internal/seqnode"
)

// WithQueued returns a copy of ctx that tells when an acquisition made with
// it starts to wait: the acquisition calls queued once it has its place in
// line behind another holder or waiter, and before it waits. A program that
// says "waiting for the lock" learns it this way without trying first,
// which would put it in no queue between the try and the wait.
//
// Its place in line is its node in ZooKeeper, which exists when queued is
// called, so every acquisition that starts later queues behind it; or, for
// a goroutine behind other goroutines of its own session waiting for the
// same lock, its place in the session's queue in the process, where it has
// no node yet (acquisitions of other sessions that start later may still
// get ahead of it). After queued was called, a node deleted by someone else
// sends its acquisition to the back of the queue with a new node, as in
// Curator; and a write lock's holder that downgrades keeps its place ahead
// with a new read node.
//
// queued is called at most once per acquisition (a semaphore that waits at
// its gate and then for a lease, or a multi-lock that waits for several
// members, calls it for the first wait), in the acquiring goroutine. It
// must not block: the acquisition waits until it returns, and a semaphore's
// acquirer may hold the semaphore's gate, which every other acquirer waits
// for, while it runs. It is not called when the lock is free or re-entered,
// nor by TryLock or TryAcquire, which never wait. A semaphore is free when
// no other acquirer is at its gate and a lease is free: one that queues
// behind an acquirer passing the gate calls it, though it will not wait
// long.
//
// It applies to every acquisition of this package and of package election
// (a Runner's campaigns, once each). A function ctx carried already, from
// an outer WithQueued, is called after queued. A Hold's Context does not
// carry either.
func WithQueued(ctx context.Context, queued func()) context.Context {
	return seqnode.WithQueued(ctx, queued)
}
