package election_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/election"
	"github.com/zkrecipes/recipes/internal/testenv"
)

// next reads the next leader from an Observe channel.
func next(t *testing.T, ch <-chan recipes.Participant) recipes.Participant {
	t.Helper()
	select {
	case p, ok := <-ch:
		require.True(t, ok, "Observe's channel closed")
		return p
	case <-time.After(time.Minute):
		t.Fatal("no leader sent within a minute")
		return recipes.Participant{}
	}
}

// TestObserve: an observer is sent the leader now (nobody, at first), then
// each new one, and nothing for participants who come and go behind the
// leader, which cost it no request either.
func TestObserve(t *testing.T) {
	for kind, mk := range kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			_, root := newRoot(t)
			path := root + "/election"
			p := testenv.ProxyT(t)
			sess := connect(t, nil, recipes.WithDialer(p.Dialer))
			var observer interface {
				Observe(context.Context) <-chan recipes.Participant
			}
			if kind == "latch" {
				l, err := election.NewLatch(sess, path, "observer")
				require.NoError(t, err)
				observer = l
			} else {
				s, err := election.NewSelector(sess, path, "observer")
				require.NoError(t, err)
				observer = s
			}
			ctx, cancel := context.WithCancel(bg())
			leaders := observer.Observe(ctx)
			assert.Empty(t, next(t, leaders).Path, "a leader before anyone campaigned")

			a, b := mk(t, path, "a"), mk(t, path, "b")
			ta, err := a.Campaign(bg())
			require.NoError(t, err)
			assert.Equal(t, "a", string(next(t, leaders).Data))

			// Others join and leave behind the leader: nothing is sent,
			// and the observer sends no request.
			before := p.Traffic()
			for _, id := range []string{"w1", "w2", "w3"} {
				w := mk(t, path, id)
				wctx, wcancel := context.WithCancel(bg())
				done := make(chan struct{})
				go func() { defer close(done); _, _ = w.Campaign(wctx) }()
				waitCampaigning(t, a, 2)
				wcancel()
				<-done
				waitCampaigning(t, a, 1)
			}
			assert.Zero(t, p.Traffic().Sub(before).Requests, "requests of the observer while the leader stayed")

			tb := campaign(b)
			waitCampaigning(t, a, 2)
			require.NoError(t, ta.Release(bg()))
			h := <-tb
			require.NotNil(t, h)
			assert.Equal(t, "b", string(next(t, leaders).Data))
			require.NoError(t, h.Release(bg()))
			assert.Empty(t, next(t, leaders).Path, "a leader once everyone resigned")

			cancel()
			for range leaders { // closed once ctx ends
			}
		})
	}
}
