// Package layout tells the recipes apart by the nodes they put under their
// path. Curator's layouts differ in their children's names, so one listing
// of a path shows which recipes use it: every acquire makes that listing
// anyway, and refuses a path another recipe uses, since two recipes on one
// path do not exclude each other.
package layout

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/seqnode"
	"github.com/zkrecipes/recipes/internal/znode"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// The names Curator's recipes give the children of their path.
const (
	MutexLockName = "lock-"    // InterProcessMutex: <path>/_c_<uuid>-lock-<seq>
	ReadLockName  = "__READ__" // InterProcessReadWriteLock, read half
	WriteLockName = "__WRIT__" // InterProcessReadWriteLock, write half
	LeaseLockName = "lease-"   // InterProcessSemaphoreV2: <path>/leases/_c_<uuid>-lease-<seq>
	SemaphoreGate = "locks"    // InterProcessSemaphoreV2's mutex, <path>/locks
	SemaphoreDir  = "leases"   // InterProcessSemaphoreV2's leases, <path>/leases
	ReadyNode     = "ready"    // DistributedDoubleBarrier: open while it exists
	LatchLockName = "latch-"   // LeaderLatch: <path>/_c_<uuid>-latch-<seq>
)

// A Kind is a recipe, as far as the layout under its path tells.
type Kind string

// The kinds. A SemaphoreMutex is a Semaphore. A Barrier has no children, so
// Of never returns it.
const (
	None          Kind = ""
	Mutex         Kind = "mutex"
	RWLock        Kind = "rwlock"
	Semaphore     Kind = "semaphore"
	DoubleBarrier Kind = "double-barrier"
	Barrier       Kind = "barrier"
	Latch         Kind = "leader-latch"
)

// Kinds lists every kind, in the order Present reports them.
var Kinds = []Kind{Mutex, RWLock, Semaphore, DoubleBarrier, Latch}

// Of returns the recipe that puts a child called name under its path, or
// None for a name no recipe makes. A child named "locks" or "leases" is a
// semaphore's, even if it is really the directory of other locks: the two
// cannot be told apart.
func Of(name string) Kind {
	switch {
	case name == SemaphoreGate || name == SemaphoreDir:
		return Semaphore
	case name == ReadyNode || UUIDShaped(name):
		return DoubleBarrier
	case seqnode.Parse(name, ReadLockName, WriteLockName).HasSeq:
		return RWLock
	case seqnode.Parse(name, MutexLockName).HasSeq:
		return Mutex
	case seqnode.Parse(name, LatchLockName).HasSeq:
		return Latch
	}
	return None
}

// Present returns the kinds that the children names show, each once, in the
// order of Kinds.
func Present(names []string) []Kind {
	seen := map[Kind]bool{}
	for _, n := range names {
		seen[Of(n)] = true
	}
	var out []Kind
	for _, k := range Kinds {
		if seen[k] {
			out = append(out, k)
		}
	}
	return out
}

// Check returns an error wrapping recipes.ErrOtherRecipe if any of names, the
// children of dir, belongs to a recipe other than own. It names the first
// such child.
func Check(dir string, names []string, own Kind) error {
	for _, n := range names {
		if k := Of(n); k != None && k != own {
			return fmt.Errorf("%w: %s has a %s's node %q, and cannot also hold a %s", recipes.ErrOtherRecipe, dir, k, n, own)
		}
	}
	return nil
}

// UUIDShaped reports whether s looks like Java's UUID.toString: 36
// lowercase hex digits and dashes, 8-4-4-4-12 (a double barrier's member).
func UUIDShaped(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdef", r) {
				return false
			}
		}
	}
	return true
}

// Read returns the children of path (under the session's chroot) and its
// data, as one listing in one retry: what an Inspect needs to tell the
// recipes at path apart. invalid is the Inspect's check of its arguments:
// when it is not nil, Read returns it and reads nothing. Any other error says
// "inspect <path>"; a missing path wraps zk.ErrNoNode.
func Read(ctx context.Context, sess znode.Session, path string, invalid error) (names []string, data []byte, err error) {
	if invalid != nil {
		return nil, nil, invalid
	}
	dir := zpath.Under(sess.Chroot(), path)
	err = sess.Retry(ctx, func(conn *zk.Conn) error {
		var err error
		if names, _, err = conn.Children(dir); err != nil {
			return znode.RefusedRead(err, dir)
		}
		data, _, err = conn.Get(dir)
		return znode.RefusedRead(err, dir)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("inspect %s: %w", path, err)
	}
	return names, data, nil
}
