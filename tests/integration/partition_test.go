package integration_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/locks"
	"github.com/zkrecipes/recipes/zktest"
)

// The partitions of issue 8: in each, the cut-off holder must be told of its
// loss before anyone else holds the lock, and for the client-side partitions
// at least a tenth of the session timeout before.
const partitionTimeout = 4 * time.Second

// defaultTick makes a holder assume the default tickTime bound, T/2, as a
// session that is not told the ensemble's tickTime does.
var defaultTick = recipes.WithTickTime(0)

// lossRace holds path in holder, queues a mutex waiter in waiter, applies
// fault, and returns how long before the waiter held the lock the holder was
// told it had lost it (negative: told after).
func lossRace(t *testing.T, admin *zk.Conn, path string, holder, waiter *recipes.Session, fault func()) time.Duration {
	t.Helper()
	margin, _ := race(t, admin, path, holder, waiter, fault, false)
	return margin
}

// race is lossRace, with the fault applied before the waiter queues if
// faultFirst: the holder, which took the lock at once and so watches the
// lock's directory, is then told of the waiter's node across the fault, and
// reads its own node on a connection that no longer gets through. It also
// returns how long after the holder's session ended the holder was told.
func race(t *testing.T, admin *zk.Conn, path string, holder, waiter *recipes.Session, fault func(), faultFirst bool) (margin, lag time.Duration) {
	t.Helper()
	h := newMutex(t, holder, path)
	held, err := h.Lock(bg())
	require.NoError(t, err)
	lost, ended := make(chan time.Time, 1), make(chan time.Time, 1)
	go func() {
		<-held.Done()
		lost <- time.Now()
	}()
	go func() {
		<-holder.Done()
		ended <- time.Now()
	}()

	faultAt := time.Now()
	if faultFirst {
		fault()
	}
	w := newMutex(t, waiter, path)
	type entry struct {
		at   time.Time
		held *locks.Hold
		err  error
	}
	entered := make(chan entry, 1)
	go func() {
		ctx, cancel := context.WithTimeout(bg(), waitLong)
		defer cancel()
		held, err := w.Lock(ctx)
		entered <- entry{time.Now(), held, err}
	}()
	waitQueued(t, admin, path, 2)
	if !faultFirst {
		faultAt = time.Now()
		fault()
	}
	e := <-entered
	require.NoError(t, e.err, "the waiter never got the lock")
	var lostAt time.Time
	select {
	case lostAt = <-lost:
	case <-time.After(waitLong):
		t.Fatal("the holder was never told")
	}
	cause := held.Err()
	assert.ErrorIs(t, cause, locks.ErrLockLost)
	assert.ErrorIs(t, cause, recipes.ErrSessionLost, "told by the client-side deadline")
	require.NoError(t, e.held.Release(bg()))
	assert.ErrorIs(t, held.Release(bg()), locks.ErrLockLost)
	margin = e.at.Sub(lostAt)
	t.Logf("loss told %v before the next holder entered (fault to loss %v, session timeout %v)",
		margin, lostAt.Sub(faultAt), partitionTimeout)
	select {
	case endedAt := <-ended:
		return margin, lostAt.Sub(endedAt)
	case <-time.After(waitLong):
		t.Fatal("the holder's session never ended")
		return 0, 0
	}
}

// TestLossBeforeHandOffOneWayPartition: the holder's packets stop reaching
// the server while the server's still reach it, watch notifications
// included (§1). Notifications prove nothing about the server hearing us.
func TestLossBeforeHandOffOneWayPartition(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	proxy := testenv.ProxyT(t)
	timeout := recipes.WithSessionTimeout(partitionTimeout)
	holder := connect(t, recipes.WithDialer(proxy.Dialer), timeout, defaultTick)

	// The holder follows config nodes that change every 250 ms, as a
	// service following its config does.
	configs := make([]string, 3)
	for i := range configs {
		configs[i] = fmt.Sprintf("%s-config%d", root, i)
		_, err := admin.Create(configs[i], nil, zk.FlagPersistent, aclAll)
		require.NoError(t, err)
		t.Cleanup(func() { _ = admin.Delete(configs[i], -1) })
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(stop)
	notified := make(chan struct{}, 64)
	for _, c := range configs {
		wg.Go(func() { followConfig(holder.Conn(), c, notified, stop) })
		wg.Go(func() { changeConfig(admin, c, stop) })
	}
	<-notified // the watches work before the partition

	margin := lossRace(t, admin, root+"/lock", holder, connect(t, timeout), func() {
		proxy.StallUp()
		t.Cleanup(proxy.Restore)
	})
	assert.GreaterOrEqual(t, margin, partitionTimeout/10)
}

// followConfig keeps a one-shot data watch on path, re-arming it after each
// notification, until stop.
func followConfig(conn *zk.Conn, path string, notified chan<- struct{}, stop <-chan struct{}) {
	for {
		_, _, ev, err := conn.GetW(path)
		if err != nil {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond): // the connection is down: try again later
				continue
			}
		}
		select {
		case <-ev:
			select {
			case notified <- struct{}{}:
			default:
			}
		case <-stop:
			return
		}
	}
}

// changeConfig writes path every 250 ms until stop.
func changeConfig(conn *zk.Conn, path string, stop <-chan struct{}) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-tick.C:
			_, _ = conn.Set(path, fmt.Append(nil, i), -1)
		}
	}
}

// TestLossBeforeHandOffBlackHole: nothing gets through either way, and the
// connection is not closed (§2). The deadline runs from the last proof of
// life, not from go-zookeeper noticing.
func TestLossBeforeHandOffBlackHole(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	proxy := testenv.ProxyT(t)
	timeout := recipes.WithSessionTimeout(partitionTimeout)
	holder := connect(t, recipes.WithDialer(proxy.Dialer), timeout, defaultTick)
	margin := lossRace(t, admin, root+"/lock", holder, connect(t, timeout), func() {
		proxy.Stall()
		t.Cleanup(proxy.Restore)
	})
	assert.GreaterOrEqual(t, margin, partitionTimeout/10)
}

// TestLossBeforeHandOffIsolatedFollower: the holder's server, a follower, is
// cut off from the other servers while the holder's own connection is fine
// (§3). The follower goes on answering the holder's pings for syncLimit ticks,
// longer than the session timeout, while the leader expires the session. The
// holder's session is made by Connect, then by NewSession over a connection
// of the test's own, which the library cannot look into.
func TestLossBeforeHandOffIsolatedFollower(t *testing.T) {
	t.Parallel()
	const tick, syncLimit = 200 * time.Millisecond, 25 // the follower answers for 5 s
	e := zktest.StartEnsemble(t, 3, zktest.WithPeerProxies(),
		zktest.WithConfig("tickTime", fmt.Sprint(tick.Milliseconds())),
		zktest.WithConfig("syncLimit", fmt.Sprint(syncLimit)))
	require.Greater(t, syncLimit*tick, partitionTimeout, "the follower must outlive the session")
	timeout := recipes.WithSessionTimeout(partitionTimeout)
	holders := map[string]func(t *testing.T, server string) *recipes.Session{
		"Connect": func(t *testing.T, server string) *recipes.Session {
			return connectTo(t, []string{server}, timeout, defaultTick)
		},
		"NewSession": func(t *testing.T, server string) *recipes.Session {
			return newSessionOver(t, []string{server}, nil, timeout, recipes.WithTickTime(tick))
		},
	}
	for _, name := range []string{"Connect", "NewSession"} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, e.WaitQuorum())
			f := e.Followers()[0]
			var rest []string
			for i, addr := range e.Servers() {
				if i != f {
					rest = append(rest, addr)
				}
			}
			admin := zktest.Connect(t, rest)
			root := zktest.Root(t, admin)
			holder := holders[name](t, e.Addr(f))
			margin := lossRace(t, admin, root+"/lock", holder, connectTo(t, rest, timeout), func() {
				require.NoError(t, e.Isolate(f))
			})
			require.NoError(t, e.Heal(f))
			assert.Positive(t, margin)
		})
	}
}

// TestLossBeforeHandOffNewSession: the one-way partition of §1 under a
// session made by NewSession over the caller's own connection, begun after
// the waiter queued, then before ("mid-read"): then the holder, which took
// the lock at once and so watches the directory, is told of the waiter's
// node and reads its own node on a connection that go-zookeeper still thinks
// alive, and which the session did not make and does not close. The hold
// ends with the session all the same, not when that read gives up.
func TestLossBeforeHandOffNewSession(t *testing.T) {
	t.Parallel()
	for _, faultFirst := range []bool{false, true} {
		t.Run(map[bool]string{false: "queued", true: "mid-read"}[faultFirst], func(t *testing.T) {
			t.Parallel()
			admin, root := newRoot(t)
			proxy := testenv.ProxyT(t)
			timeout := recipes.WithSessionTimeout(partitionTimeout)
			holder := newSessionOver(t, zktest.Servers(t), proxy.Dialer, timeout)
			margin, lag := race(t, admin, root+"/lock", holder, connect(t, timeout), func() {
				proxy.StallUp()
				t.Cleanup(proxy.Restore)
			}, faultFirst)
			assert.GreaterOrEqual(t, margin, partitionTimeout/10)
			// go-zookeeper gives a read up at two thirds of the session
			// timeout after it last heard from the server, about 300 ms
			// after the session's own deadline here: a hold that waited
			// for it would be told that late.
			assert.Less(t, lag, 100*time.Millisecond, "the hold was told %v after its session ended", lag)
		})
	}
}

// newSessionOver makes a go-zookeeper connection of the test's own (through
// dial, if not nil) and a Session over it with NewSession. Both are closed
// when t ends.
func newSessionOver(t *testing.T, servers []string, dial zk.Dialer, opts ...recipes.Option) *recipes.Session {
	t.Helper()
	if dial == nil {
		dial = net.DialTimeout
	}
	conn, events, err := zk.Connect(servers, partitionTimeout, zk.WithLogger(quiet{}), zk.WithDialer(dial))
	require.NoError(t, err)
	t.Cleanup(conn.Close)
	ctx, cancel := context.WithTimeout(bg(), waitLong)
	defer cancel()
	s, err := recipes.NewSession(ctx, conn, events, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestLossBeforeHandOffAfterTimeoutShrinks: a reconnect can be granted a
// shorter session timeout than the first connection (here the server comes
// back with a lower maxSessionTimeout, as in a rolling restart; in an
// ensemble, a member configured differently). The server then expires the
// session that much sooner, and the holder must still be told before the
// lock is handed on: its deadline follows the new grant.
func TestLossBeforeHandOffAfterTimeoutShrinks(t *testing.T) {
	t.Parallel()
	srv := zktest.Start(t)
	proxy, err := testenv.NewProxy(srv.Addr())
	require.NoError(t, err)
	t.Cleanup(func() { _ = proxy.Close() })
	const path = "/shrinks/lock"
	holder := connectTo(t, srv.Servers(), recipes.WithDialer(proxy.Dialer),
		recipes.WithSessionTimeout(20*time.Second), recipes.WithTickTime(testTickTime))
	require.Equal(t, 20*time.Second, holder.Timeout())
	held, err := newMutex(t, holder, path).Lock(bg())
	require.NoError(t, err)

	require.NoError(t, srv.RestartWith("maxSessionTimeout=4000"))
	eventually(t, "the holder to reconnect with the shorter timeout", func() bool {
		return holder.Timeout() == 4*time.Second && holder.State() != recipes.StateSuspended
	})
	require.NoError(t, held.Err(), "the hold ended in the restart")

	proxy.StallUp() // the server hears nothing more from the holder
	t.Cleanup(proxy.Restore)
	waiter := connectTo(t, srv.Servers())
	ctx, cancel := context.WithTimeout(bg(), waitLong)
	defer cancel()
	h, err := newMutex(t, waiter, path).Lock(ctx)
	require.NoError(t, err, "the server did not expire the holder's session")
	assert.ErrorIs(t, held.Err(), locks.ErrLockLost, "two holders: the holder was not told before the hand-off")
	require.NoError(t, h.Release(bg()))
}
