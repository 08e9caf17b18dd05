package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/election"
	"github.com/zkrecipes/recipes/locks"
)

// The backoff of an election worker's Runner after a failed connect or
// campaign. The default maximum (10 s) would let a worker that failed a few
// times in a row, as every worker does while an ensemble has no quorum, sit
// out for longer than a takeover may take.
const (
	electionMinBackoff = 50 * time.Millisecond
	electionMaxBackoff = 500 * time.Millisecond
)

// elect is the loop of a RecipeLatch: an election.Runner that campaigns with
// an election.Latch at the loop's path, in the worker's session (a new one
// when it is lost), and does each term it wins as a section (see work):
// enter with the term's token, guarded writes of it to the election's
// resource every pace until the hold time passes or the term is lost, exit
// or loss, and resign. Every participant's id is its pid.
func (w *worker) elect(ctx context.Context, i int, l Loop) {
	sc := w.storeConn()
	defer sc.close()
	// Run calls Candidate, the campaign and Lead in turn, on its own
	// goroutine: what one leaves here for the next needs no lock.
	var (
		sess *recipes.Session // the session of the campaign under way
		id   string           // its hold id
	)
	r := election.Runner{
		Connect: w.sessions.get,
		Candidate: func(s *recipes.Session) (election.Campaigner, error) {
			latch, err := election.NewLatch(s, l.Path, strconv.Itoa(os.Getpid()))
			if err != nil {
				return nil, err
			}
			sess = s
			return campaign(func(ctx context.Context) (*locks.Hold, error) {
				id = w.holdID()
				if err := w.log.Append(Event{Type: EvWait, Hold: id, Recipe: l.Recipe, Paths: []string{l.Path}}); err != nil {
					return nil, err
				}
				return latch.Campaign(ctx)
			}), nil
		},
		// The term is a section, ended as the lock loops end theirs: its
		// exit or loss is logged before its own Release, which tells
		// whether it was lost before the resignation (the Runner's own
		// Release after Lead then has nothing left to do).
		Lead: func(_ context.Context, term *locks.Hold) error {
			return w.work(sess, sc, id, record(l.Recipe, []string{l.Path}, term, true))
		},
		MinBackoff: electionMinBackoff,
		MaxBackoff: electionMaxBackoff,
	}
	for ctx.Err() == nil {
		err := r.Run(ctx)
		if err != nil && ctx.Err() == nil && !errors.Is(err, recipes.ErrSessionLost) && !errors.Is(err, recipes.ErrSessionExpired) {
			fmt.Fprintf(os.Stderr, "chaos worker %d loop %d: %v\n", os.Getpid(), i, err)
			time.Sleep(10 * time.Millisecond) // pacing after an unexpected error
		}
	}
}

// campaign is an election.Campaigner made of a function: a Latch's
// campaign that logs its wait first.
type campaign func(ctx context.Context) (*locks.Hold, error)

func (c campaign) Campaign(ctx context.Context) (*locks.Hold, error) { return c(ctx) }
