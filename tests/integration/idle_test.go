package integration_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/zktest"
)

// TestLossBeforeHandOffAfterIdleness: a holder whose session sat idle for
// longer than its loss deadline allows, and is cut off (nothing gets
// through either way) right after its Lock returns, is told of its loss
// before the waiter holds, and at least a tenth of the session timeout
// before; by default (the session kept a proof ready with its idle probes)
// and in WithoutIdleProbes (it sent none while idle, and its Lock waited for
// a new proof).
func TestLossBeforeHandOffAfterIdleness(t *testing.T) {
	t.Parallel()
	idle := 5 * partitionTimeout / 2 // past 0.9 × the timeout after any proof before it
	for _, mode := range []struct {
		name       string
		opts       []recipes.Option
		minSyncs   int64
		maxSyncs   int64
		idleProbes bool
	}{
		// Every 3/8 of the timeout: 6 or 7 in the idle time, not the 25 of
		// a session that holds.
		{"default", nil, 3, 12, true},
		{"without idle probes", []recipes.Option{recipes.WithoutIdleProbes()}, 0, 0, false},
	} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			admin, root := newRoot(t)
			proxy := testenv.ProxyT(t)
			timeout := recipes.WithSessionTimeout(partitionTimeout)
			holder := connect(t, append([]recipes.Option{recipes.WithDialer(proxy.Dialer), timeout, defaultTick}, mode.opts...)...)
			// The first probe, sent as the session starts, may still
			// be on its way.
			require.Eventually(t, func() bool { return proxy.Syncs() >= 1 }, waitLong, time.Millisecond)
			before := proxy.Syncs()
			// Idleness is what this test is about: there is no state
			// to wait for but the time that passes.
			time.Sleep(idle)
			syncs := proxy.Syncs() - before
			t.Logf("%d syncs in %v of idleness", syncs, idle)
			assert.GreaterOrEqual(t, syncs, mode.minSyncs, "probes while idle")
			assert.LessOrEqual(t, syncs, mode.maxSyncs, "probes while idle")

			margin, _ := race(t, admin, root+"/lock", holder, connect(t, timeout), func() {
				proxy.Stall()
				t.Cleanup(proxy.Restore)
			}, true)
			assert.GreaterOrEqual(t, margin, partitionTimeout/10)
		})
	}
}

// TestIdleSessionOutlivesItsDeadline: a session on which nothing is held or
// waited for is not ended by its loss deadline: cut off for longer than the
// deadline allows, and back before its connection has been down for the
// whole session timeout, it goes on, and takes a lock.
func TestIdleSessionOutlivesItsDeadline(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	proxy := testenv.ProxyT(t)
	const timeout = 8 * time.Second
	states := make(stateLog, 16)
	s := connect(t, recipes.WithDialer(proxy.Dialer), recipes.WithSessionTimeout(timeout), defaultTick,
		recipes.WithStateListener(states.listener))
	proxy.Stall()
	stalled := time.Now()
	t.Cleanup(proxy.Restore)
	// go-zookeeper gives the connection up 2/3 of the timeout after it
	// last read from it; the session may then end a whole timeout later.
	states.waitFor(t, recipes.StateSuspended)
	// Any proof came before the stall, so its deadline has passed 0.9 ×
	// the timeout after it: past that is what this test is about.
	time.Sleep(time.Until(stalled.Add(timeout * 9 / 10).Add(200 * time.Millisecond)))
	proxy.Restore()
	states.waitFor(t, recipes.StateReconnected)
	require.NoError(t, s.Err(), "stalled for %v", time.Since(stalled))

	m := newMutex(t, s, root+"/lock")
	held, err := m.Lock(bg())
	require.NoError(t, err)
	require.NoError(t, held.Release(bg()))
	assert.NoError(t, s.Err())
}

// TestIdleSessionLostWhenDownForTheTimeout: a session on which nothing is
// held or waited for ends with ErrSessionLost once its connection has been
// down for the whole session timeout, as Curator's LOST, and not before.
func TestIdleSessionLostWhenDownForTheTimeout(t *testing.T) {
	t.Parallel()
	proxy := testenv.ProxyT(t)
	const timeout = 4 * time.Second
	var suspended time.Time
	states := make(chan time.Time, 1)
	s := connect(t, recipes.WithDialer(proxy.Dialer), recipes.WithSessionTimeout(timeout), defaultTick,
		recipes.WithStateListener(func(st recipes.State) {
			if st == recipes.StateSuspended {
				select {
				case states <- time.Now():
				default:
				}
			}
		}))
	proxy.Stall()
	t.Cleanup(proxy.Restore)
	select {
	case suspended = <-states:
	case <-time.After(waitLong):
		t.Fatal("the session was never suspended")
	}
	select {
	case <-s.Done():
	case <-time.After(waitLong):
		t.Fatal("the session never ended")
	}
	assert.ErrorIs(t, s.Err(), recipes.ErrSessionLost)
	assert.GreaterOrEqual(t, time.Since(suspended), timeout, "ended before its connection was down for the timeout")
}

// TestHoldingSessionProbesEveryTenth: while it holds, a session probes
// every tenth of its timeout, however short the ensemble's tickTime (the
// gap after which a probe proves the one before): not more often.
func TestHoldingSessionProbesEveryTenth(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	proxy := testenv.ProxyT(t)
	const timeout = 4 * time.Second
	s := connect(t, recipes.WithDialer(proxy.Dialer), recipes.WithSessionTimeout(timeout), recipes.WithTickTime(testTickTime))
	held, err := newMutex(t, s, root+"/lock").Lock(bg())
	require.NoError(t, err)
	before := proxy.Syncs()
	const hold = 2 * time.Second // a hold's probes over time are what this test is about
	time.Sleep(hold)
	syncs := proxy.Syncs() - before
	require.NoError(t, held.Release(bg()))
	t.Logf("%d syncs in %v of holding", syncs, hold)
	assert.GreaterOrEqual(t, syncs, int64(hold/(timeout/10))-2, "probes while holding")
	assert.LessOrEqual(t, syncs, int64(hold/(timeout/10))+2, "probes while holding")
}

// TestNewSessionProvesWithinTheGap: NewSession returns once its first proof
// of life is in, two probes 0.6 × tickTime apart, whatever the timeout's
// tenth (an hour's here: six minutes).
func TestNewSessionProvesWithinTheGap(t *testing.T) {
	t.Parallel()
	conn, events, err := zk.Connect(zktest.Servers(t), testSessionTimeout, zk.WithLogger(quiet{}))
	require.NoError(t, err)
	defer conn.Close()
	ctx, cancel := context.WithTimeout(bg(), waitLong)
	defer cancel()
	start := time.Now()
	s, err := recipes.NewSession(ctx, conn, events, recipes.WithSessionTimeout(time.Hour), recipes.WithTickTime(testTickTime))
	require.NoError(t, err, "no proof within %v", waitLong)
	defer s.Close()
	t.Logf("proven in %v", time.Since(start))
}
