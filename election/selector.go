package election

import (
	"context"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/layout"
	"github.com/zkrecipes/recipes/internal/recipe"
	"github.com/zkrecipes/recipes/internal/zpath"
	"github.com/zkrecipes/recipes/locks"
)

// A Selector is one participant in the election at a path: Curator's
// LeaderSelector, which is an InterProcessMutex on the path whose node
// carries the participant's id. Leading is holding that lock: a term lasts
// until it is released (the participant resigns) or lost, and the next in
// line leads.
//
// A Selector holds nothing but its configuration; it is safe for
// concurrent use. Its path is a locks.Mutex's, and a Mutex on the same path
// takes part in the same election.
type Selector struct {
	sess *recipes.Session
	id   string
	m    *locks.Mutex
	dir  string // the path under the session's chroot
}

// NewSelector returns the participant id in the election at path. It does
// no I/O, and fails as NewLatch does.
func NewSelector(sess *recipes.Session, path, id string) (*Selector, error) {
	m, err := locks.NewMutex(sess, path, recipes.WithData([]byte(id)), recipe.As(args.RoleSelector))
	if err != nil {
		return nil, err
	}
	return &Selector{sess: sess, id: id, m: m, dir: zpath.Under(sess.Chroot(), path)}, nil
}

// Path returns the election's path.
func (s *Selector) Path() string { return s.m.Path() }

// ID returns the participant's id.
func (s *Selector) ID() string { return s.id }

// Campaign blocks until this participant leads, and returns its term, as
// Latch.Campaign does.
func (s *Selector) Campaign(ctx context.Context) (*locks.Hold, error) {
	if err := args.Context(ctx, "election: Selector.Campaign"); err != nil {
		return nil, err
	}
	return s.m.Lock(ctx)
}

// TryCampaign leads if nobody leads or waits now, and reports whether it
// does; it never waits.
func (s *Selector) TryCampaign(ctx context.Context) (*locks.Hold, bool, error) {
	if err := args.Context(ctx, "election: Selector.TryCampaign"); err != nil {
		return nil, false, err
	}
	return s.m.TryLock(ctx)
}

// Participants lists the election's participants in the order they
// campaigned, as Latch.Participants does; their Kind is KindMutex.
func (s *Selector) Participants(ctx context.Context) ([]recipes.Participant, error) {
	if err := args.Context(ctx, "election: Selector.Participants"); err != nil {
		return nil, err
	}
	return participants(ctx, s.sess, s.dir, recipes.KindMutex, layout.MutexLockName)
}

// Leader returns the participant that leads now, as Latch.Leader does.
func (s *Selector) Leader(ctx context.Context) (recipes.Participant, bool, error) {
	if err := args.Context(ctx, "election: Selector.Leader"); err != nil {
		return recipes.Participant{}, false, err
	}
	return leader(ctx, s.sess, s.dir, recipes.KindMutex, layout.MutexLockName)
}
