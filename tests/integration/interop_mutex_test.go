package integration_test

import (
	"context"
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/testenv/curatortest"
	"github.com/zkrecipes/recipes/internal/testenv/curatortest/eventlog"
	"github.com/zkrecipes/recipes/locks"
	"github.com/zkrecipes/recipes/zktest"
)

// curatorNode is the name Curator's InterProcessMutex gives its nodes.
var curatorNode = regexp.MustCompile(`^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-lock-[0-9]{10}$`)

// interopJava starts CuratorPeer with args in the background. The returned
// channel yields its result. A cleanup (which runs before newRoot's check for
// leftover nodes) stops the process if it still runs and waits for it.
func interopJava(t *testing.T, peer *curatortest.Peer, args ...string) (<-chan error, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithTimeout(bg(), 2*time.Minute)
	done := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		_, err := peer.Run(ctx, args...)
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		<-exited
	})
	return done, cancel
}

// interopLogged waits until log has an Enter event by client.
func interopLogged(t *testing.T, log, client string) {
	t.Helper()
	eventually(t, client+" to enter", func() bool {
		events, _ := eventlog.Read(log) // missing or torn while written: not yet
		return slices.ContainsFunc(events, func(e eventlog.Event) bool {
			return e.Op == eventlog.Enter && e.Client == client
		})
	})
}

// TestMutexInteropWithCurator makes two Java processes (Curator's
// InterProcessMutex) and two Go sessions (locks.Mutex) contend for one lock
// path, each logging its entries and exits, and checks that no two ever
// held it at once.
func TestMutexInteropWithCurator(t *testing.T) {
	t.Parallel()
	const javaProcs, goWorkers, iterations = 2, 2, 15
	_, root := newRoot(t)
	path := root + "/lock"
	log := filepath.Join(t.TempDir(), "events")

	var java [][]string
	var holders []goHolder
	for i := range javaProcs {
		java = append(java, javaArgs(t, i, "mutex", path, log, iterations))
	}
	for range goWorkers {
		m := newMutex(t, connect(t), path)
		holders = append(holders, goHolder{eventlog.KindMutex, m.Lock})
	}
	events := interop(t, log, java, holders, iterations)
	stats, err := eventlog.Check(events, map[string]int{eventlog.KindMutex: 1})
	require.NoError(t, err)
	s := stats[eventlog.KindMutex]
	assert.Equal(t, (javaProcs+goWorkers)*iterations, s.Entries)
	assert.Equal(t, 1, s.MaxActive)
	assert.Zero(t, s.Active)

	// Count the hand-overs between the languages: with both queued on one
	// path, FIFO order makes them alternate.
	perClient := map[string]int{}
	handovers := map[string]int{}
	last := ""
	for _, e := range events {
		if e.Op != eventlog.Enter {
			continue
		}
		perClient[e.Client]++
		lang, _, _ := strings.Cut(e.Client, "-")
		if last != "" && last != lang {
			handovers[last+"->"+lang]++
		}
		last = lang
	}
	t.Logf("entries per client %v, hand-overs %v", perClient, handovers)
	for c, n := range perClient {
		assert.Equal(t, iterations, n, "entries of %s", c)
	}
	assert.Positive(t, handovers["java->go"], "no Go holder followed a Java one")
	assert.Positive(t, handovers["go->java"], "no Java holder followed a Go one")
}

// TestMutexInteropParticipantsAndRevoke checks that Go sees a Curator holder
// first in Participants, queues behind it, takes over as soon as the Java
// process closes its session, and is told of a revocation requested by
// Curator's Revoker.
func TestMutexInteropParticipantsAndRevoke(t *testing.T) {
	t.Parallel()
	peer := curatortest.EnsureT(t)
	admin, root := newRoot(t)
	path := root + "/lock"
	log := filepath.Join(t.TempDir(), "events")
	servers := curatortest.ServersArg(zktest.Servers(t))
	javaID := curatortest.ClientID(0)

	// A Java holder that would hold for two minutes, with a session that
	// outlives waitLong: a Go waiter that gets the lock within waitLong of
	// the holder's stop got it because the holder closed its session, not
	// because the server expired it. (The test servers grant up to 60s; a
	// server of ZK_SERVERS with default settings, 40s.)
	javaDone, stopJava := interopJava(t, peer, "--session-ms=60000", "mutex", servers, path, "1", "120000", log, javaID)
	m := newMutex(t, connect(t), path)
	interopLogged(t, log, javaID)

	ps, err := m.Participants(bg())
	require.NoError(t, err)
	require.Len(t, ps, 1)
	javaNode := ps[0].Path
	assert.Regexp(t, curatorNode, strings.TrimPrefix(javaNode, path+"/"))
	// Curator's default node data is the host's IP address.
	assert.NotNil(t, net.ParseIP(string(ps[0].Data)), "Curator node data %q", ps[0].Data)

	_, ok, err := m.TryLock(bg())
	require.NoError(t, err)
	assert.False(t, ok, "TryLock succeeded while Curator holds the lock")

	// A Go waiter queues behind the Java holder.
	type result struct {
		held *locks.Hold
		err  error
	}
	got := make(chan result, 1)
	lockCtx, cancelLock := context.WithTimeout(bg(), waitLong)
	defer cancelLock()
	go func() {
		held, err := m.Lock(lockCtx)
		got <- result{held, err}
	}()
	waitQueued(t, admin, path, 2)
	ps, err = m.Participants(bg())
	require.NoError(t, err)
	require.Len(t, ps, 2)
	assert.Equal(t, javaNode, ps[0].Path, "the Curator holder comes first")
	assert.Equal(t, string(recipes.DefaultData()), string(ps[1].Data))
	goNode := ps[1].Path
	assert.Regexp(t, curatorNode, strings.TrimPrefix(goNode, path+"/"))

	// SIGTERM: the peer closes its session, so the Go waiter gets the lock
	// long before the Java session's timeout could have expired it.
	require.Greater(t, 40*time.Second, waitLong)
	stopped := time.Now()
	stopJava()
	var r result
	select {
	case r = <-got:
	case <-time.After(waitLong):
		t.Fatal("Go waiter did not get the lock after the Java holder stopped")
	}
	require.NoError(t, r.err)
	took := time.Since(stopped)
	t.Logf("Go took over %v after SIGTERM to the Java holder", took)
	err = <-javaDone
	assert.Error(t, err, "a peer stopped while holding reports it")
	t.Logf("stopped Java holder: %v", err)
	events, err := eventlog.Read(log)
	require.NoError(t, err)
	_, err = eventlog.Check(events, map[string]int{eventlog.KindMutex: 1})
	require.NoError(t, err)

	// Curator's Revoker asks the Go holder to let go.
	revoked := r.held.Revoked()
	require.NotNil(t, revoked)
	ctx, cancel := context.WithTimeout(bg(), waitLong)
	defer cancel()
	_, err = peer.Run(ctx, "revoke", servers, goNode)
	require.NoError(t, err)
	select {
	case <-revoked:
	case <-time.After(waitLong):
		t.Fatal("Revoked did not fire after Curator's Revoker.attemptRevoke")
	}
	require.NoError(t, r.held.Err(), "revocation is a request, not a loss")
	require.NoError(t, r.held.Release(bg()))

	// Revoking a node that is gone is not an error for Curator either.
	_, err = peer.Run(ctx, "revoke", servers, goNode)
	require.NoError(t, err)
}
