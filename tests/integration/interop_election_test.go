package integration_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/election"
	"github.com/zkrecipes/recipes/internal/testenv/curatortest"
	"github.com/zkrecipes/recipes/internal/testenv/curatortest/eventlog"
	"github.com/zkrecipes/recipes/locks"
	"github.com/zkrecipes/recipes/zktest"
)

// kindLeader is the event-log kind of a term, in Go and Java alike.
const kindLeader = "E"

// A goCandidate is an election.Latch or election.Selector.
type goCandidate interface {
	Campaign(ctx context.Context) (*locks.Hold, error)
	Leader(ctx context.Context) (recipes.Participant, bool, error)
}

// newCandidate makes a Go participant of the mode's kind ("latch" or
// "selector") with id, in a session of its own.
func newCandidate(t *testing.T, mode, path, id string) goCandidate {
	t.Helper()
	if mode == "latch" {
		l, err := election.NewLatch(connect(t), path, id)
		require.NoError(t, err)
		return l
	}
	s, err := election.NewSelector(connect(t), path, id)
	require.NoError(t, err)
	return s
}

// TestElectionInteropWithCurator: Curator's LeaderLatch and our Latch on
// one path, then Curator's LeaderSelector and our Selector, each taking
// turns to lead: exactly one leader at any time, both languages leading,
// each as often as it campaigned.
func TestElectionInteropWithCurator(t *testing.T) {
	for _, mode := range []string{"latch", "selector"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			const javaProcs, goWorkers, iterations = 2, 2, 8
			_, root := newRoot(t)
			path := root + "/election"
			log := filepath.Join(t.TempDir(), "events")
			var java [][]string
			for i := range javaProcs {
				java = append(java, javaArgs(t, i, mode, path, log, iterations))
			}
			var holders []goHolder
			for i := range goWorkers {
				c := newCandidate(t, mode, path, eventlog.GoClient(i))
				holders = append(holders, goHolder{kindLeader, c.Campaign})
			}
			events := interop(t, log, java, holders, iterations)
			stats, err := eventlog.Check(events, map[string]int{kindLeader: 1})
			require.NoError(t, err)
			s := stats[kindLeader]
			assert.Equal(t, (javaProcs+goWorkers)*iterations, s.Entries)
			assert.Equal(t, 1, s.MaxActive, "two leaders at once")
			perLang := map[string]int{}
			for _, e := range events {
				if e.Op == eventlog.Enter {
					lang, _, _ := strings.Cut(e.Client, "-")
					perLang[lang]++
				}
			}
			assert.Equal(t, map[string]int{"java": javaProcs * iterations, "go": goWorkers * iterations}, perLang)
		})
	}
}

// TestElectionLeaderAgreesWithCurator: while a Go participant leads,
// Curator's getLeader names it; while a Java one leads, ours names that.
func TestElectionLeaderAgreesWithCurator(t *testing.T) {
	for _, mode := range []string{"latch", "selector"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			peer := curatortest.EnsureT(t)
			_, root := newRoot(t)
			path := root + "/election"
			servers := curatortest.ServersArg(zktest.Servers(t))
			leaderOf := func() string {
				out, err := peer.Run(bg(), "leader", servers, path, mode)
				require.NoError(t, err)
				return strings.TrimSpace(out)
			}
			assert.Equal(t, "none", leaderOf(), "Curator's leader before anyone campaigned")

			goes := newCandidate(t, mode, path, "go-leader")
			term, err := goes.Campaign(bg())
			require.NoError(t, err)
			assert.Equal(t, "leader go-leader", leaderOf(), "Curator's leader while Go leads")
			require.NoError(t, term.Release(bg()))

			// A Java participant that leads for two minutes, unless stopped.
			log := filepath.Join(t.TempDir(), "events")
			javaID := curatortest.ClientID(0)
			_, stop := interopJava(t, peer, mode, servers, path, "1", "120000", log, javaID)
			interopLogged(t, log, javaID)
			p, ok, err := goes.Leader(bg())
			require.NoError(t, err)
			require.True(t, ok, "no leader while Java leads")
			assert.Equal(t, javaID, string(p.Data), "our leader while Java leads")
			stop()
		})
	}
}
