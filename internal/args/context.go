package args

import (
	"context"
	"fmt"
)

// Context returns an error wrapping ErrInvalid if ctx is nil, naming call
// (such as "locks: Mutex.Lock"), and nil otherwise. Every public call that
// takes a context checks it first, so a nil one is refused before anything
// is sent or changed, instead of panicking deep inside (possibly with a node
// created and not yet deleted).
func Context(ctx context.Context, call string) error {
	if ctx == nil {
		return fmt.Errorf("%w: %s: nil context (use context.Background() or context.TODO())", ErrInvalid, call)
	}
	return nil
}
