package election_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/election"
	"github.com/zkrecipes/recipes/locks"
	"github.com/zkrecipes/recipes/zktest"
)

// sessionLog is a Runner's Connect that keeps the sessions it makes.
type sessionLog struct {
	servers []string
	opts    []recipes.Option
	mu      sync.Mutex
	all     []*recipes.Session
}

func (s *sessionLog) connect(ctx context.Context) (*recipes.Session, error) {
	sess, err := recipes.Connect(ctx, s.servers, s.opts...)
	if err == nil {
		s.mu.Lock()
		s.all = append(s.all, sess)
		s.mu.Unlock()
	}
	return sess, err
}

func (s *sessionLog) made() []*recipes.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*recipes.Session(nil), s.all...)
}

// runner is a Runner of a latch at path with id, that makes its sessions
// through log.
func runner(path, id string, log *sessionLog, lead func(context.Context, *locks.Hold) error) election.Runner {
	return runnerOf("latch", path, id, log, lead)
}

// runnerOf is runner with a latch or a selector (kind).
func runnerOf(kind, path, id string, log *sessionLog, lead func(context.Context, *locks.Hold) error) election.Runner {
	return election.Runner{
		Connect: log.connect,
		Candidate: func(sess *recipes.Session) (election.Campaigner, error) {
			if kind == "selector" {
				return election.NewSelector(sess, path, id)
			}
			return election.NewLatch(sess, path, id)
		},
		Lead:       lead,
		MinBackoff: 10 * time.Millisecond,
	}
}

// run runs r in the background; the returned channel yields Run's error.
func run(ctx context.Context, r election.Runner) <-chan error {
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	return done
}

// TestRunnersTakeTurns: two runners on one path lead one at a time, each
// campaigning again after it resigns, until they are stopped; they leave
// nothing behind.
func TestRunnersTakeTurns(t *testing.T) {
	t.Parallel()
	for kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			runnersTakeTurns(t, kind)
		})
	}
}

func runnersTakeTurns(t *testing.T, kind string) {
	_, root := newRoot(t)
	path := root + "/election"
	var active, terms atomic.Int32
	var overlap atomic.Bool
	perRunner := [2]atomic.Int32{}
	ctx, cancel := context.WithCancel(bg())
	defer cancel()
	var done []<-chan error
	for i := range 2 {
		lead := func(ctx context.Context, term *locks.Hold) error {
			if active.Add(1) > 1 {
				overlap.Store(true)
			}
			time.Sleep(5 * time.Millisecond) // the leader's work
			active.Add(-1)
			terms.Add(1)
			perRunner[i].Add(1)
			return nil // resign: the other leads next
		}
		done = append(done, run(ctx, runnerOf(kind, path, "r"+string(rune('0'+i)), &sessionLog{servers: zktest.Servers(t)}, lead)))
	}
	deadline := time.Now().Add(time.Minute)
	for perRunner[0].Load() < 3 || perRunner[1].Load() < 3 {
		require.True(t, time.Now().Before(deadline), "terms %d, %d", perRunner[0].Load(), perRunner[1].Load())
		time.Sleep(10 * time.Millisecond) // polling the runners' counts
	}
	cancel()
	for _, d := range done {
		assert.ErrorIs(t, <-d, context.Canceled)
	}
	assert.False(t, overlap.Load(), "two runners led at once")
	t.Logf("%d terms", terms.Load())
}

// TestRunnerAfterSessionExpiry: the test expires the session of a
// runner's term, which the term names (Hold.Session); the runner is told
// (its term ends), makes a new session, and leads again with a larger
// token.
func TestRunnerAfterSessionExpiry(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	log := &sessionLog{servers: zktest.Servers(t)}
	terms := make(chan *locks.Hold)
	ctx, cancel := context.WithCancel(bg())
	defer cancel()
	done := run(ctx, runner(root+"/election", "r", log, func(ctx context.Context, term *locks.Hold) error {
		select {
		case terms <- term:
		case <-ctx.Done():
		}
		<-ctx.Done() // lead until the term is lost, or Run is stopped
		return context.Cause(ctx)
	}))
	first := within(t, terms)
	zktest.ExpireSession(t, first.Session().ID())
	second := within(t, terms)
	assert.ErrorIs(t, first.Err(), locks.ErrLockLost, "the first term")
	assert.ErrorIs(t, first.Session().Err(), recipes.ErrSessionExpired, "the first term's session")
	assert.Greater(t, second.Token(), first.Token(), "the second term's token")
	if made := log.made(); assert.Len(t, made, 2, "sessions made") {
		assert.Same(t, made[0], first.Session(), "the first term's session")
		assert.Same(t, made[1], second.Session(), "the second term's session")
	}
	cancel()
	assert.ErrorIs(t, within(t, done), context.Canceled)
}

// TestRunnerAcrossServerRestart: a runner whose server goes away while it
// leads is told that its term is over, and once the server is back it
// leads again, in a new session, with a larger token, after the server
// has expired the old session that it restored.
func TestRunnerAcrossServerRestart(t *testing.T) {
	t.Parallel()
	srv := zktest.Start(t)
	admin := zktest.Connect(t, srv.Servers())
	root := zktest.Root(t, admin)
	log := &sessionLog{servers: srv.Servers(), opts: []recipes.Option{recipes.WithSessionTimeout(2 * time.Second)}}
	tokens, ended := make(chan int64, 2), make(chan error, 2)
	ctx, cancel := context.WithCancel(bg())
	defer cancel()
	done := run(ctx, runner(root+"/election", "r", log, func(ctx context.Context, term *locks.Hold) error {
		tokens <- term.Token()
		<-ctx.Done() // lead until the term is lost, or Run is stopped
		ended <- term.Err()
		return context.Cause(ctx)
	}))
	first := within(t, tokens)
	require.NoError(t, srv.Stop())
	assert.ErrorIs(t, within(t, ended), locks.ErrLockLost, "the term outlived the server")
	assert.Error(t, log.made()[0].Err(), "the first session outlived its term")
	require.NoError(t, srv.Restart())
	second := within(t, tokens)
	assert.Greater(t, second, first, "the second term's token")
	assert.GreaterOrEqual(t, len(log.made()), 2, "sessions made")
	cancel()
	assert.ErrorIs(t, within(t, done), context.Canceled)
}

// within receives from ch, failing the test if nothing comes within a
// minute: a bug fails the test rather than hanging the package.
func within[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		require.FailNow(t, "nothing received within a minute")
	}
	var zero T
	return zero
}

// TestRunnerStopsWhileWaiting: a runner stopped while another leads
// returns at once and leaves no node; one given no work is refused.
func TestRunnerStopsWhileWaiting(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	path := root + "/election"
	holder := kinds["latch"](t, path, "holder")
	term, err := holder.Campaign(bg())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(bg())
	done := run(ctx, runner(path, "r", &sessionLog{servers: zktest.Servers(t)}, func(context.Context, *locks.Hold) error {
		t.Error("led while another held the election")
		return nil
	}))
	waitCampaigning(t, holder, 2)
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
	waitCampaigning(t, holder, 1)
	require.NoError(t, term.Release(bg()))

	assert.ErrorIs(t, election.Runner{}.Run(bg()), recipes.ErrInvalid)
}

// TestRunnerEndsOnARefusingACL: a campaign that the path's ACL refuses
// ends Run, rather than being retried for ever.
func TestRunnerEndsOnARefusingACL(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/election"
	_, err := admin.CreateContainer(root, nil, zk.FlagContainer, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	_, err = admin.CreateContainer(path, nil, zk.FlagContainer, zk.WorldACL(zk.PermRead))
	require.NoError(t, err)
	err = within(t, run(bg(), runner(path, "r", &sessionLog{servers: zktest.Servers(t)}, func(context.Context, *locks.Hold) error {
		t.Error("led where the ACL refuses to create")
		return nil
	})))
	assert.ErrorIs(t, err, zk.ErrNoAuth)
}
