package locks

import (
	"context"

	"github.com/zkrecipes/recipes/internal/seqnode"
)

// WithQueued returns a copy of ctx that tells when an acquisition made with
// it starts to wait: the acquisition calls queued once its node is in line
// behind another holder or waiter, and before it waits. A program that says
// "waiting for the lock" learns it this way without trying first, which
// would put it in no queue between the try and the wait.
//
// queued is called at most once per acquisition (a semaphore that waits at
// its gate and then for a lease, or a multi-lock that waits for several
// members, calls it for the first wait), in the acquiring goroutine; the
// acquisition waits until it returns. It is not called when the lock is
// free or re-entered, nor by TryLock or TryAcquire, which never wait. When
// it is called, the acquisition is queued ahead of every acquisition that
// starts later: in ZooKeeper, or, for goroutines of one session waiting for
// one lock, in the session's queue in the process.
//
// It applies to every acquisition of this package and of package election
// (Campaign). A Hold's Context does not carry it.
func WithQueued(ctx context.Context, queued func()) context.Context {
	return seqnode.WithQueued(ctx, queued)
}
