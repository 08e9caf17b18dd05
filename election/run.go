package election

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/locks"
)

// A Campaigner campaigns for leadership: a *Latch or a *Selector.
type Campaigner interface {
	Campaign(ctx context.Context) (*locks.Hold, error)
}

// The backoff a Runner waits between failed attempts unless told otherwise.
const (
	DefaultMinBackoff = 100 * time.Millisecond
	DefaultMaxBackoff = 10 * time.Second
)

// A Runner does a service's leader-only work: it campaigns, runs Lead
// while it leads, and campaigns again after each term, whether Lead
// resigned or the term was lost, making a new session when its session is
// lost (Curator's LeaderSelector with autoRequeue, kazoo's Election.run).
type Runner struct {
	// Connect makes the session to campaign in: at the start, and again
	// whenever the session is lost. Run closes the sessions it makes.
	Connect func(ctx context.Context) (*recipes.Session, error)

	// Candidate makes the participant in a session, with NewLatch or
	// NewSelector: before each campaign, in the session to campaign in. An
	// error from it ends Run.
	Candidate func(sess *recipes.Session) (Campaigner, error)

	// Lead does the leader's work for one term. Its context ends when the
	// term is lost (before anyone else can lead) and when Run's context
	// ends. Returning resigns: Run campaigns again, unless Lead returned
	// an error other than its term's loss, which ends Run. The term's
	// Session is the one Connect made: a test can expire it
	// (zktest.ExpireSession) to see Run campaign again in a new one.
	Lead func(ctx context.Context, term *locks.Hold) error

	// MinBackoff and MaxBackoff bound the wait after a connect or a
	// campaign that failed, doubled at each failure in a row, with
	// jitter: DefaultMinBackoff and DefaultMaxBackoff if zero.
	MinBackoff, MaxBackoff time.Duration
}

// Run runs the Runner until ctx ends, Lead or Candidate fails, or a
// connect or a campaign fails for good: bad input (recipes.ErrInvalid), or,
// for a campaign, a path another recipe uses (recipes.ErrOtherRecipe) or
// nodes whose ACL refuses this session (zk.ErrNoAuth). It retries other
// failures after a backoff. When ctx ends it resigns, closes its session
// and returns ctx's cause; nothing is left behind.
func (r Runner) Run(ctx context.Context) error {
	if err := args.Context(ctx, "election: Runner.Run"); err != nil {
		return err
	}
	if r.Connect == nil || r.Candidate == nil || r.Lead == nil {
		return fmt.Errorf("%w: a Runner needs Connect, Candidate and Lead", recipes.ErrInvalid)
	}
	minWait, maxWait := r.MinBackoff, r.MaxBackoff
	if minWait <= 0 {
		minWait = DefaultMinBackoff
	}
	if maxWait <= 0 {
		maxWait = DefaultMaxBackoff
	}
	maxWait = max(maxWait, minWait)
	b := backoff{min: minWait, max: maxWait, next: minWait}

	var sess *recipes.Session
	defer func() {
		if sess != nil {
			_ = sess.Close()
		}
	}()
	for {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if sess != nil && sess.Err() != nil {
			_ = sess.Close()
			sess = nil
		}
		if sess == nil {
			s, err := r.Connect(ctx)
			switch {
			case ctx.Err() != nil:
				if err == nil && s != nil {
					_ = s.Close() // made as ctx ended
				}
				return context.Cause(ctx)
			case errors.Is(err, recipes.ErrInvalid):
				return fmt.Errorf("election: connect: %w", err)
			case err != nil:
				if err := b.wait(ctx); err != nil {
					return err
				}
				continue
			}
			sess = s
		}
		c, err := r.Candidate(sess)
		if err != nil {
			return fmt.Errorf("election: candidate: %w", err)
		}
		term, err := c.Campaign(ctx)
		switch {
		case ctx.Err() != nil:
			if err == nil {
				resign(ctx, term) // won as ctx ended
			}
			return context.Cause(ctx)
		case errors.Is(err, recipes.ErrInvalid) || errors.Is(err, recipes.ErrOtherRecipe) || errors.Is(err, zk.ErrNoAuth):
			return fmt.Errorf("election: %w", err) // a Latch's says "campaign PATH"
		case err != nil:
			if err := b.wait(ctx); err != nil {
				return err
			}
			continue
		}
		b.reset()
		if err := r.term(ctx, term); err != nil {
			return err
		}
	}
}

// term runs Lead for one term and resigns. It returns Lead's error unless
// the term was lost or ctx ended.
func (r Runner) term(ctx context.Context, term *locks.Hold) error {
	lctx, stop := context.WithCancelCause(term.Context())
	defer stop(nil)
	unhook := context.AfterFunc(ctx, func() { stop(context.Cause(ctx)) })
	defer unhook()
	err := r.Lead(lctx, term)
	lost := errors.Is(term.Err(), locks.ErrLockLost)
	resign(ctx, term) // a lost term's release only cleans up
	if err != nil && !lost && ctx.Err() == nil {
		return fmt.Errorf("election: lead: %w", err)
	}
	return nil
}

// resignBound bounds how long a resignation waits for ZooKeeper; past it
// the session deletes the node in the background.
const resignBound = 10 * time.Second

// resign releases term, for up to resignBound, even once ctx has ended.
func resign(ctx context.Context, term *locks.Hold) {
	release, cancel := context.WithTimeout(context.WithoutCancel(ctx), resignBound)
	defer cancel()
	_ = term.Release(release)
}

// backoff is the wait between failed attempts: doubled at each failure,
// with up to half again of jitter, from min up to max.
type backoff struct {
	min, max, next time.Duration
}

func (b *backoff) reset() { b.next = b.min }

// wait waits the next backoff, or until ctx ends (its cause).
func (b *backoff) wait(ctx context.Context) error {
	d := b.next + rand.N(b.next/2+1)
	b.next = min(2*b.next, b.max)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
