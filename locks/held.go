package locks

import (
	"context"
	"fmt"
	"sync"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/seqnode"
)

// holdKey finds a lock's hold in a context. Locks of one kind on one path in
// one session share a key, so a nested Lock re-enters even through another
// value of the same lock.
type holdKey struct {
	kind string
	sess *recipes.Session
	path string
}

// held is one acquisition, carried by the context Lock returned.
type held struct {
	hold *seqnode.Hold

	mu    sync.Mutex // guards count
	count int        // Lock calls not yet matched by Unlock
}

func lookup(ctx context.Context, key holdKey) *held {
	h, _ := ctx.Value(key).(*held)
	return h
}

// attach returns a child of ctx that carries the hold and is cancelled, with
// the hold's error as cause, when the hold ends.
func attach(ctx context.Context, key holdKey, hold *seqnode.Hold) context.Context {
	hctx, cancel := context.WithCancelCause(ctx)
	hold.OnEnd(cancel)
	return context.WithValue(hctx, key, &held{hold: hold, count: 1})
}

// enter counts one more nested Lock, unless the hold has ended.
func (h *held) enter() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.hold.Err(); err != nil {
		return err
	}
	h.count++
	return nil
}

// exit counts one Unlock and reports whether it was the outermost.
func (h *held) exit() (last bool, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.count == 0 {
		return false, ErrNotHeld
	}
	h.count--
	return h.count == 0, nil
}

// active returns the live hold carried by ctx for key, or why there is none.
func active(ctx context.Context, key holdKey) (*seqnode.Hold, error) {
	h := lookup(ctx, key)
	if h == nil {
		return nil, fmt.Errorf("%w: %s: the context holds no such lock", ErrNotHeld, key.path)
	}
	if err := h.hold.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", key.path, err)
	}
	return h.hold, nil
}

// release undoes one Lock of the hold carried by ctx; the outermost deletes
// the node. It reports a loss that happened while held.
func release(ctx context.Context, key holdKey) error {
	h := lookup(ctx, key)
	if h == nil {
		return fmt.Errorf("%w: %s: the context holds no such lock", ErrNotHeld, key.path)
	}
	last, err := h.exit()
	if err != nil {
		return fmt.Errorf("%w: %s: already unlocked", err, key.path)
	}
	if !last {
		if err := h.hold.Err(); err != nil {
			return fmt.Errorf("unlock %s: %w", key.path, err)
		}
		return nil
	}
	// The caller's context may be cancelled (the lock lost, a deadline):
	// the release must still happen.
	if err := h.hold.Release(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("unlock %s: %w", key.path, err)
	}
	return nil
}
