// Package election elects one leader among the processes that share a
// path, on the same nodes as Apache Curator's leader recipes, so that Go
// and Java participants elect one leader among them:
//
//   - A Latch is Curator's LeaderLatch: each participant queues a node
//     under the path, with its id as the node's data, and the lowest node
//     leads until it goes.
//   - A Selector is Curator's LeaderSelector: an InterProcessMutex on the
//     path, its node carrying the participant's id; leadership is holding
//     the lock.
//
// Campaigning returns the leadership as a *locks.Hold, with every promise
// a lock's hold makes (package locks): the term ends, and its Context is
// cancelled, before any other participant can lead (the session's loss
// deadline); its Token grows from term to term; Guard and Multi make writes
// that fail once the term is over; Release resigns. A campaign that is
// cancelled leaves nothing behind (one whose ctx has already ended creates
// nothing), and candidates lead
// in the order they campaigned. Leader and Participants say who leads and
// who waits; Observe follows the leader as it changes. A Runner is the loop
// a service runs: campaign, lead, campaign again, across lost sessions.
package election

import (
	"context"
	"fmt"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/layout"
	"github.com/zkrecipes/recipes/internal/recipe"
	"github.com/zkrecipes/recipes/internal/seqnode"
	"github.com/zkrecipes/recipes/internal/zpath"
	"github.com/zkrecipes/recipes/locks"
)

// A Latch is one participant in the election at a path: Curator's
// LeaderLatch, on the same nodes (<path>/_c_<uuid>-latch-<sequence>, with
// the participant's id as data). The participant whose node is lowest
// leads; the others wait, each watching the node ahead of its own.
//
// A Latch holds nothing but its configuration; it is safe for concurrent
// use. Campaigning with the Context of its own term re-enters that term,
// as a Mutex's Lock does.
type Latch struct {
	sess *recipes.Session
	id   string
	m    *locks.Mutex // the latch's lock, on LeaderLatch's nodes (args.RoleLatch)
	dir  string       // the path under the session's chroot
}

// NewLatch returns the participant id in the election at path. It does no
// I/O. id may be anything, "" too (Curator's default); it is what Leader and
// Participants report. It fails, creating nothing, for a nil session, a
// path that is not a valid ZooKeeper path, or an id too large for a node
// (over recipes.MaxDataSize, or too large with the path for a request).
func NewLatch(sess *recipes.Session, path, id string) (*Latch, error) {
	m, err := locks.NewMutex(sess, path, recipes.WithData([]byte(id)), recipe.As(args.RoleLatch))
	if err != nil {
		return nil, err
	}
	return &Latch{sess: sess, id: id, m: m, dir: zpath.Under(sess.Chroot(), path)}, nil
}

// Path returns the election's path.
func (l *Latch) Path() string { return l.m.Path() }

// ID returns the participant's id.
func (l *Latch) ID() string { return l.id }

// Campaign blocks until this participant leads, and returns its term. It
// queues behind the participants that campaigned before it. If ctx ends or
// an error occurs first, it returns the error and leaves no node behind;
// ctx bounds only the wait, not the term. Release resigns: the next in line
// leads.
func (l *Latch) Campaign(ctx context.Context) (*locks.Hold, error) {
	if err := args.Context(ctx, "election: Latch.Campaign"); err != nil {
		return nil, err
	}
	return l.m.Lock(ctx)
}

// TryCampaign leads if nobody leads or waits now, and reports whether it
// does; it never waits.
func (l *Latch) TryCampaign(ctx context.Context) (*locks.Hold, bool, error) {
	if err := args.Context(ctx, "election: Latch.TryCampaign"); err != nil {
		return nil, false, err
	}
	return l.m.TryLock(ctx)
}

// Participants lists the election's participants in the order they
// campaigned: the first leads (Holds), each other waits for the node ahead
// of its own. Their ids are their Data.
func (l *Latch) Participants(ctx context.Context) ([]recipes.Participant, error) {
	if err := args.Context(ctx, "election: Latch.Participants"); err != nil {
		return nil, err
	}
	return participants(ctx, l.sess, l.dir, recipes.KindLatch, layout.LatchLockName)
}

// Leader returns the participant that leads now, and false if nobody
// campaigns: the one at the head of the queue, which leads or will as soon
// as it hears that the node before it went. Its id is its Data, as
// Curator's getLeader reads it.
func (l *Latch) Leader(ctx context.Context) (recipes.Participant, bool, error) {
	if err := args.Context(ctx, "election: Latch.Leader"); err != nil {
		return recipes.Participant{}, false, err
	}
	return leader(ctx, l.sess, l.dir, recipes.KindLatch, layout.LatchLockName)
}

// participants reads dir's nodes of lockName in queue order: the first
// leads.
func participants(ctx context.Context, sess *recipes.Session, dir string, kind recipes.Kind, lockName string) ([]recipes.Participant, error) {
	first := func(seqnode.Node) seqnode.Predicate { return seqnode.FirstN(1) }
	ps, err := recipe.Participants(ctx, sess, dir, first, func(string) recipes.Kind { return kind }, lockName)
	if err != nil {
		return nil, fmt.Errorf("election %s: %w", zpath.Outside(sess.Chroot(), dir), err)
	}
	return ps, nil
}

// leader is the participant at the head of the queue, if any: it leads, or
// will once it hears that the node before it went (Curator's getLeader,
// which takes the first node still there, says the same).
func leader(ctx context.Context, sess *recipes.Session, dir string, kind recipes.Kind, lockName string) (recipes.Participant, bool, error) {
	ps, err := participants(ctx, sess, dir, kind, lockName)
	if err != nil || len(ps) == 0 {
		return recipes.Participant{}, false, err
	}
	p := ps[0]
	p.Holds, p.Waits = true, ""
	return p, true, nil
}
