package locks

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/layout"
	"github.com/zkrecipes/recipes/internal/recipe"
	"github.com/zkrecipes/recipes/internal/seqnode"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// Participant is one node of a lock: a holder or a waiter, with its kind,
// whether it holds and the node it waits for. See [recipes.Participant].
type Participant = recipes.Participant

// A Usage is one lock recipe that [Inspect] found at a path.
type Usage struct {
	Recipe       string        // "mutex", "rwlock" or "semaphore" (a SemaphoreMutex is a semaphore of 1 lease)
	MaxLeases    int           // a semaphore's recorded number of leases; 0 if none is recorded (Curator records none)
	Participants []Participant // holders and waiters, in queue order
}

// Inspect reports which lock recipes use path, by the names of the nodes
// under it, each with its participants in queue order: who holds, by the
// recipe's own rule, and who waits for which node. It works whether or not
// this process takes part. A path no lock uses (a barrier, an empty
// directory) has none; a path that two recipes use at once (which do not
// exclude each other) has both, in the order mutex, rwlock, semaphore. A
// semaphore whose number of leases is not recorded counts every lease as
// held. A path that does not exist is an error wrapping zk.ErrNoNode.
func Inspect(ctx context.Context, sess *recipes.Session, path string) ([]Usage, error) {
	if err := args.Context(ctx, "locks: Inspect"); err != nil {
		return nil, err
	}
	names, data, err := layout.Read(ctx, sess, path, recipe.Where(sess, path))
	if err != nil {
		return nil, err
	}
	dir := zpath.Under(sess.Chroot(), path)
	var out []Usage
	for _, k := range layout.Present(names) {
		u := Usage{Recipe: string(k)}
		switch k {
		case layout.Mutex:
			u.Participants, err = mutexParticipants(ctx, sess, dir)
		case layout.RWLock:
			u.Participants, err = rwParticipants(ctx, sess, dir)
		case layout.Semaphore:
			u.MaxLeases = recordedMax(data)
			u.Participants, err = semaphoreParticipants(ctx, sess, dir, u.MaxLeases)
		default:
			continue // not a lock
		}
		if err != nil {
			return nil, fmt.Errorf("inspect %s: %w", path, err)
		}
		out = append(out, u)
	}
	return out, nil
}

// recordedMax returns the maximum a Semaphore recorded in its path's data,
// or 0.
func recordedMax(data []byte) int {
	n, ok := strings.CutPrefix(string(data), maxLeasesPrefix)
	if !ok {
		return 0
	}
	max, err := strconv.Atoi(n)
	if err != nil || max < 1 {
		return 0
	}
	return max
}

// kinds maps the lock names to the kinds of participant.
var kinds = map[string]recipes.Kind{
	mutexLockName: recipes.KindMutex,
	readLockName:  recipes.KindRead,
	writeLockName: recipes.KindWrite,
	leaseLockName: recipes.KindLease,
}

// participants reads dir's lock nodes in queue order, deciding who holds by
// rule.
func participants(ctx context.Context, sess *recipes.Session, dir string, rule seqnode.Rule, lockNames ...string) ([]Participant, error) {
	return recipe.Participants(ctx, sess, dir, rule, func(name string) recipes.Kind { return kinds[name] }, lockNames...)
}

func firstHolds(seqnode.Node) seqnode.Predicate { return seqnode.FirstN(1) }

func mutexParticipants(ctx context.Context, sess *recipes.Session, path string) ([]Participant, error) {
	return participants(ctx, sess, path, firstHolds, mutexLockName)
}

// rwRule applies the reader's predicate to read nodes and the writer's to
// write nodes, as RLock and Lock do.
func rwRule(n seqnode.Node) seqnode.Predicate {
	if n.Prefix == readLockName {
		return readHolds("")
	}
	return seqnode.FirstN(1)
}

func rwParticipants(ctx context.Context, sess *recipes.Session, path string) ([]Participant, error) {
	return participants(ctx, sess, path, rwRule, readLockName, writeLockName)
}

// leaseRule is the lease predicate for max leases; with max 0 (not
// recorded) every lease holds.
func leaseRule(max int) seqnode.Rule {
	return func(seqnode.Node) seqnode.Predicate {
		if max < 1 {
			return func([]seqnode.Node, int) (bool, int) { return true, -1 }
		}
		return seqnode.AtMost(max)
	}
}

// semaphoreParticipants lists the leases (the first max hold; every one if
// max is 0) and then the acquirers at the gate (see withGate).
func semaphoreParticipants(ctx context.Context, sess *recipes.Session, path string, max int) ([]Participant, error) {
	leases, err := participants(ctx, sess, zpath.Join(path, semaphoreLeases), leaseRule(max), leaseLockName)
	if err != nil {
		return nil, err
	}
	gate, err := participants(ctx, sess, zpath.Join(path, semaphoreGate), firstHolds, mutexLockName)
	if err != nil {
		return nil, err
	}
	return withGate(leases, gate), nil
}

// withGate appends to leases the acquirers at the gate, as waiting leases.
// The gate's first node is the acquirer that holds the gate. Once it has
// created its lease node, that is the newest lease, of the same session and
// newer than its gate node: it is listed by that lease, and the next at the
// gate waits for it. Until then it is listed by its gate node, waiting for
// no node in particular. Every other acquirer at the gate waits for the gate
// node ahead of it, which is listed.
func withGate(leases, gate []Participant) []Participant {
	if len(gate) == 0 {
		return leases
	}
	if n := len(leases); n > 0 && leases[n-1].Session == gate[0].Session && leases[n-1].Token > gate[0].Token {
		if len(gate) > 1 {
			gate[1].Waits = leases[n-1].Path
		}
		gate = gate[1:]
	} else {
		gate[0].Holds, gate[0].Waits = false, ""
	}
	for _, p := range gate {
		p.Kind = recipes.KindLease
		leases = append(leases, p)
	}
	return leases
}
