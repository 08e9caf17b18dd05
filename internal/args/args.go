// Package args holds the checks of what the recipes are given that need no
// session (sizes, counts, contexts), so that every recipe applies the same
// rules with the same words; package recipe checks a recipe's session, path
// and node options with them.
package args

import (
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/zkrecipes/recipes/internal/jute"
)

// MaxDataSize is the most node data a recipe accepts, whatever its path:
// 1 KiB below ZooKeeper's default jute.maxbuffer, for the path and ACL the
// request carries too, and so that a Java client, which reads a reply only
// below its own jute.maxbuffer, can read the data back. Every request is
// checked as a whole as well (Fits).
const MaxDataSize = 1<<20 - 1<<10

// MaxRequest is the largest request ZooKeeper takes with its default
// jute.maxbuffer: see package jute.
const MaxRequest = jute.MaxRequest

// Fits checks that a request of size bytes, described by what ("the create
// of a lock node in /a", say), is one ZooKeeper takes. Its error wraps
// ErrInvalid and names the limit and the size.
func Fits(what string, size int) error {
	if size <= MaxRequest {
		return nil
	}
	return fmt.Errorf("%w: %s would be a %d-byte request, over ZooKeeper's limit of %d bytes (its default jute.maxbuffer), past which the server drops the connection", ErrInvalid, what, size, MaxRequest)
}

// Short is p as an error message shows it: whole if short, else its start
// and its length.
func Short(p string) string {
	const keep = 48
	if len(p) <= keep+16 {
		return p
	}
	return fmt.Sprintf("%s... (%d bytes)", p[:keep], len(p))
}

// DefaultData identifies this process: "host:pid".
func DefaultData() []byte {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return fmt.Appendf(nil, "%s:%d", host, os.Getpid())
}

// ErrInvalid is wrapped by every error for bad input. It is
// recipes.ErrInvalid: declared here, where every check can name it, and
// exported by the root package.
var ErrInvalid = errors.New("recipes: invalid argument")

// MaxCount is the most a recipe's count (a semaphore's leases, a double
// barrier's members) may be: Curator keeps each in a Java int, and a
// SharedCount, which can set a semaphore's leases, is a 4-byte integer.
const MaxCount = math.MaxInt32

// Count checks a recipe's count (a semaphore's leases, a double barrier's
// members): n must be from 1 to MaxCount. unit names one of what is
// counted; its error wraps ErrInvalid.
func Count(n int, recipe, unit string) error {
	switch {
	case n < 1:
		return fmt.Errorf("%w: %s needs at least 1 %s, not %d", ErrInvalid, recipe, unit, n)
	case n > MaxCount:
		return fmt.Errorf("%w: %s takes at most %d %ss (Curator's limit, a Java int), not %d", ErrInvalid, recipe, MaxCount, unit, n)
	}
	return nil
}

// A Target is where a recipe's nodes go and what they carry, from arguments
// that passed the checks of package recipe.
type Target struct {
	Path string // as the caller gave it
	Dir  string // in ZooKeeper: Path under the session's chroot
	Data []byte // what the recipe's nodes carry
	Role Role   // a Mutex's role (SetRole)
}
