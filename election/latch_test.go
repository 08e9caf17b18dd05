package election_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/election"
	"github.com/zkrecipes/recipes/locks"
	"github.com/zkrecipes/recipes/zktest"
)

// A candidate is a Latch or a Selector.
type candidate interface {
	Campaign(ctx context.Context) (*locks.Hold, error)
	TryCampaign(ctx context.Context) (*locks.Hold, bool, error)
	Leader(ctx context.Context) (recipes.Participant, bool, error)
	Participants(ctx context.Context) ([]recipes.Participant, error)
	ID() string
}

// kinds makes each kind of candidate, each in a session of its own.
var kinds = map[string]func(t *testing.T, path, id string) candidate{
	"latch": func(t *testing.T, path, id string) candidate {
		l, err := election.NewLatch(connect(t, nil), path, id)
		require.NoError(t, err)
		return l
	},
	"selector": func(t *testing.T, path, id string) candidate {
		s, err := election.NewSelector(connect(t, nil), path, id)
		require.NoError(t, err)
		return s
	},
}

// campaign campaigns in the background.
func campaign(c candidate) <-chan *locks.Hold {
	ch := make(chan *locks.Hold, 1)
	go func() {
		h, err := c.Campaign(bg())
		if err != nil {
			close(ch)
			return
		}
		ch <- h
	}()
	return ch
}

// waitCampaigning waits until n candidates are queued at path.
func waitCampaigning(t *testing.T, c candidate, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ps, err := c.Participants(bg())
		require.NoError(t, err)
		if len(ps) == n {
			return
		}
		require.True(t, time.Now().Before(deadline), "%d campaigning, want %d", len(ps), n)
		time.Sleep(10 * time.Millisecond) // polling the server's state
	}
}

// TestElectionInOrder: candidates lead one at a time, in the order they
// campaigned; Leader and Participants say who; each term's token is larger
// than the last; a resignation hands the lead on.
func TestElectionInOrder(t *testing.T) {
	for kind, mk := range kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			_, root := newRoot(t)
			path := root + "/election"
			a, b, c := mk(t, path, "a"), mk(t, path, "b"), mk(t, path, "c")

			_, ok, err := a.Leader(bg())
			require.NoError(t, err)
			assert.False(t, ok, "a leader before anyone campaigned")

			first, err := a.Campaign(bg())
			require.NoError(t, err)
			second := campaign(b)
			waitCampaigning(t, a, 2)
			third := campaign(c)
			waitCampaigning(t, a, 3)

			_, ok, err = c.TryCampaign(bg())
			require.NoError(t, err)
			assert.False(t, ok, "TryCampaign led while another did")

			ps, err := b.Participants(bg())
			require.NoError(t, err)
			require.Len(t, ps, 3)
			for i, id := range []string{"a", "b", "c"} {
				assert.Equal(t, id, string(ps[i].Data), "participant %d", i)
				assert.Equal(t, i == 0, ps[i].Holds, "participant %d holds", i)
			}
			assert.Equal(t, ps[0].Path, ps[1].Waits, "b waits for a")
			leader, ok, err := c.Leader(bg())
			require.NoError(t, err)
			require.True(t, ok)
			assert.Equal(t, "a", string(leader.Data))

			token := first.Token()
			require.NoError(t, first.Release(bg()))
			h2 := <-second
			require.NotNil(t, h2, "b never led")
			assert.Greater(t, h2.Token(), token, "b's term's token")
			leader, _, err = a.Leader(bg())
			require.NoError(t, err)
			assert.Equal(t, "b", string(leader.Data))

			token = h2.Token()
			require.NoError(t, h2.Release(bg()))
			h3 := <-third
			require.NotNil(t, h3, "c never led")
			assert.Greater(t, h3.Token(), token, "c's term's token")
			require.NoError(t, h3.Release(bg()))
			waitCampaigning(t, a, 0)
		})
	}
}

// TestOldLeaderToldFirst: a leader cut off from the server is told its
// term is over before the next candidate leads.
func TestOldLeaderToldFirst(t *testing.T) {
	for kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			_, root := newRoot(t)
			path := root + "/election"
			p := zktest.NewProxy(t, zktest.Servers(t)...)
			cut := connect(t, p.Servers(), recipes.WithSessionTimeout(2*time.Second))
			var old candidate
			var err error
			if kind == "latch" {
				old, err = election.NewLatch(cut, path, "old")
			} else {
				old, err = election.NewSelector(cut, path, "old")
			}
			require.NoError(t, err)
			term, err := old.Campaign(bg())
			require.NoError(t, err)
			next := kinds[kind](t, path, "next")
			nextTerm := campaign(next)
			waitCampaigning(t, next, 2)

			p.Cut()
			h := <-nextTerm
			require.NotNil(t, h, "the next candidate never led")
			select {
			case <-term.Done():
			default:
				t.Fatal("the next candidate leads while the old leader's term goes on")
			}
			require.ErrorIs(t, term.Err(), locks.ErrLockLost)
			require.NoError(t, h.Release(bg()))
			p.Heal()
		})
	}
}

// TestCancelledCampaignLeavesNothing: a campaign whose context ends while it
// waits returns its cause and leaves no node.
func TestCancelledCampaignLeavesNothing(t *testing.T) {
	for kind, mk := range kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			_, root := newRoot(t)
			path := root + "/election"
			a, b := mk(t, path, "a"), mk(t, path, "b")
			term, err := a.Campaign(bg())
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(bg())
			done := make(chan error, 1)
			go func() {
				_, err := b.Campaign(ctx)
				done <- err
			}()
			waitCampaigning(t, a, 2)
			cancel()
			require.ErrorIs(t, <-done, context.Canceled)
			waitCampaigning(t, a, 1)
			require.NoError(t, term.Release(bg()))
		})
	}
}

// TestBadInput: what cannot be an election is refused, creating nothing.
func TestBadInput(t *testing.T) {
	t.Parallel()
	sess := connect(t, nil)
	for name, f := range map[string]func() error{
		"nil session latch":    func() error { _, err := election.NewLatch(nil, "/e", "a"); return err },
		"nil session selector": func() error { _, err := election.NewSelector(nil, "/e", "a"); return err },
		"relative path":        func() error { _, err := election.NewLatch(sess, "e", "a"); return err },
		"id too large": func() error {
			_, err := election.NewLatch(sess, "/e", strings.Repeat("x", recipes.MaxDataSize+1))
			return err
		},
		"selector id too large": func() error {
			_, err := election.NewSelector(sess, "/e", strings.Repeat("x", recipes.MaxDataSize+1))
			return err
		},
	} {
		assert.ErrorIs(t, f(), recipes.ErrInvalid, name)
	}
	l, err := election.NewLatch(sess, "/e", "")
	require.NoError(t, err)
	var nilCtx context.Context
	_, err = l.Campaign(nilCtx)
	assert.ErrorIs(t, err, recipes.ErrInvalid, "a nil context")
	_, open := <-l.Observe(nilCtx)
	assert.False(t, open, "Observe with a nil context sent a leader")
}

// TestLatchRefusesAnotherRecipesPath: a latch on a path a Mutex uses is
// refused, and leaves nothing.
func TestLatchRefusesAnotherRecipesPath(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/shared"
	m, err := locks.NewMutex(connect(t, nil), path)
	require.NoError(t, err)
	held, err := m.Lock(bg())
	require.NoError(t, err)
	l, err := election.NewLatch(connect(t, nil), path, "a")
	require.NoError(t, err)
	_, err = l.Campaign(bg())
	require.ErrorIs(t, err, recipes.ErrOtherRecipe)
	children, _, err := admin.Children(path)
	require.NoError(t, err)
	assert.Len(t, children, 1, "the refused latch left a node: %v", children)
	require.NoError(t, held.Release(bg()))
}
