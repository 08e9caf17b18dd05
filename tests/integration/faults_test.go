package integration_test

import (
	"context"
	"strings"
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

// Opcodes of the requests that create a node.
const (
	opCreate  = 1
	opCreate2 = 15
)

// stateLog records a session's states for a test to wait on. Make it with
// room for every state the test will see: the listener must not block.
type stateLog chan recipes.State

func (l stateLog) listener(s recipes.State) {
	select {
	case l <- s:
	default:
		panic("stateLog full")
	}
}

// waitFor waits for the session to report want. It fails, rather than wait
// for ever, when the session reports a final state instead (a session cut
// off on a loaded machine can be lost before it reconnects), or when nothing
// comes within waitLong.
func (l stateLog) waitFor(t *testing.T, want recipes.State) {
	t.Helper()
	timeout := time.After(waitLong)
	for {
		select {
		case s := <-l:
			switch s {
			case want:
				return
			case recipes.StateExpired, recipes.StateLost, recipes.StateClosed:
				t.Fatalf("waiting for the session to be %v, it ended: %v", want, s)
			}
		case <-timeout:
			t.Fatalf("the session was not %v within %v", want, waitLong)
		}
	}
}

// TestMutexHolderLearnsOfLossFirst partitions a holder from ZooKeeper for
// longer than its session timeout: the holder's context must be cancelled
// with ErrLockLost before the next waiter acquires, and the next holder's
// fencing token must be greater.
func TestMutexHolderLearnsOfLossFirst(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/lock"
	proxy := testenv.ProxyT(t)
	holderSession := connect(t, recipes.WithDialer(proxy.Dialer), recipes.WithSessionTimeout(testSessionTimeout))
	holder := newMutex(t, holderSession, path)
	heldA, err := holder.Lock(bg())
	require.NoError(t, err)
	tokenA := heldA.Token()

	waiter := newMutex(t, connect(t), path)
	type result struct {
		held      *locks.Hold
		err       error
		lostFirst bool
	}
	got := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(bg(), waitLong)
		defer cancel()
		h, err := waiter.Lock(ctx)
		got <- result{h, err, heldA.Err() != nil}
	}()
	waitQueued(t, admin, path, 2)

	proxy.Stall() // the holder's packets go nowhere; it is not told
	r := <-got
	require.NoError(t, r.err)
	assert.True(t, r.lostFirst, "the waiter acquired before the holder learned of its loss")
	cause := heldA.Err()
	assert.ErrorIs(t, cause, locks.ErrLockLost)
	assert.ErrorIs(t, cause, recipes.ErrSessionLost)
	assert.Equal(t, recipes.StateLost, holderSession.State())

	tokenB := r.held.Token()
	assert.Greater(t, tokenB, tokenA)
	require.NoError(t, r.held.Release(bg()))
	assert.ErrorIs(t, heldA.Release(bg()), locks.ErrLockLost)
	proxy.Restore()
}

// TestMutexSurvivesShortDisconnect cuts the holder's connection for less
// than the session timeout: the session is suspended and then reconnected,
// and the lock is still held throughout.
func TestMutexSurvivesShortDisconnect(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/lock"
	proxy := testenv.ProxyT(t)
	states := make(stateLog, 16)
	s := connect(t, recipes.WithDialer(proxy.Dialer), recipes.WithStateListener(states.listener))
	m := newMutex(t, s, path)
	held, err := m.Lock(bg())
	require.NoError(t, err)
	id := s.ID()

	proxy.Cut()
	states.waitFor(t, recipes.StateSuspended)
	proxy.Restore()
	states.waitFor(t, recipes.StateReconnected)
	assert.Equal(t, id, s.ID())
	assert.Equal(t, id, s.Conn().SessionID(), "reconnected on another session")
	assert.NoError(t, held.Err(), "a short disconnect lost the lock")
	assert.Len(t, children(t, admin, path), 1)
	require.NoError(t, held.Release(bg()))
	assert.Empty(t, children(t, admin, path))
}

// TestMutexRecoversNodeAfterLostCreateReply drops ZooKeeper's reply to our
// create and the connection with it: the server made the node, so the
// retry must find it by its UUID instead of making a second one.
func TestMutexRecoversNodeAfterLostCreateReply(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/lock"
	proxy := testenv.ProxyT(t)
	s := connect(t, recipes.WithDialer(proxy.Dialer))
	m := newMutex(t, s, path)
	dropped := proxy.DropReply(func(op int32, p string) bool {
		return (op == opCreate || op == opCreate2) && strings.HasPrefix(p, path+"/_c_")
	})

	ctx, cancel := context.WithTimeout(bg(), waitLong)
	defer cancel()
	held, err := m.Lock(ctx)
	require.NoError(t, err)
	select {
	case <-dropped:
	default:
		t.Fatal("the create reply was never dropped")
	}
	nodes := children(t, admin, path)
	require.Len(t, nodes, 1, "a second node was created")
	_, st, err := admin.Get(path + "/" + nodes[0])
	require.NoError(t, err)
	assert.Equal(t, s.ID(), st.EphemeralOwner)
	token := held.Token()
	assert.Equal(t, st.Czxid, token)
	require.NoError(t, held.Release(bg()))
	assert.Empty(t, children(t, admin, path))
}

// TestNewSessionWrapsAConnection checks a session over a connection the
// caller made: locks work, and Close leaves the connection open.
func TestNewSessionWrapsAConnection(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	conn, events, err := zk.Connect(zktest.Servers(t), testSessionTimeout, zk.WithLogger(quiet{}))
	require.NoError(t, err)
	defer conn.Close()
	s, err := recipes.NewSession(bg(), conn, events, recipes.WithSessionTimeout(testSessionTimeout))
	require.NoError(t, err)
	m := newMutex(t, s, root+"/lock")
	held, err := m.Lock(bg())
	require.NoError(t, err)
	require.NoError(t, held.Release(bg()))
	_, counted := s.Disconnects()
	assert.False(t, counted, "a NewSession session cannot count its lost connections")
	require.NoError(t, s.Close())
	assert.ErrorIs(t, s.Err(), recipes.ErrClosed)
	_, _, err = conn.Exists(root)
	assert.NoError(t, err, "closing the session closed the caller's connection")
	assert.Empty(t, children(t, admin, root+"/lock"))
}

// TestNewSessionEndedStillDeletesItsNodes: a NewSession Session can end while
// the caller's connection keeps its ZooKeeper session, and with it the
// session's nodes: lost to its client-side deadline in a stall shorter than
// the timeout ZooKeeper granted, or closed. A Release then still deletes the
// node, so the lock goes on to the next waiter instead of staying taken for
// as long as the connection lives.
func TestNewSessionEndedStillDeletesItsNodes(t *testing.T) {
	t.Parallel()
	for _, end := range []string{"lost", "closed"} {
		t.Run(end, func(t *testing.T) {
			t.Parallel()
			admin, root := newRoot(t)
			path := root + "/lock"
			proxy := testenv.ProxyT(t)
			// ZooKeeper grants 20 s; the Session is told less, the
			// safe direction, so that it gives up first.
			conn, events, err := zk.Connect([]string{proxy.Addr()}, 20*time.Second, zk.WithLogger(quiet{}))
			require.NoError(t, err)
			t.Cleanup(conn.Close)
			s, err := recipes.NewSession(bg(), conn, events, recipes.WithSessionTimeout(testSessionTimeout),
				recipes.WithTickTime(testTickTime))
			require.NoError(t, err)
			held, err := newMutex(t, s, path).Lock(bg())
			require.NoError(t, err)
			got := lockAndUnlock(newMutex(t, connect(t), path), nil)
			waitQueued(t, admin, path, 2)

			if end == "lost" {
				proxy.Stall()
				select {
				case <-held.Done():
				case <-time.After(waitLong):
					t.Fatal("the hold was not lost in the stall")
				}
				require.ErrorIs(t, s.Err(), recipes.ErrSessionLost)
				proxy.Restore()
			} else {
				require.NoError(t, s.Close())
			}
			eventually(t, "the connection to have its session", func() bool { return conn.State() == zk.StateHasSession })
			assert.ErrorIs(t, held.Release(bg()), locks.ErrLockLost)
			require.NoError(t, <-got, "the waiter did not get the lock")
			assert.Empty(t, children(t, admin, path))
		})
	}
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// expiredHold takes the mutex at path in a session that does not give up on
// its own (its client-side timer is told a far longer timeout), partitions
// it until a waiter in another session gets the lock, which shows the
// server expired the session, and lets the connection come back. It returns
// the hold and its session, which the server will tell of the expiry.
func expiredHold(t *testing.T, admin *zk.Conn, path string, opts ...recipes.Option) (*locks.Hold, *recipes.Session) {
	t.Helper()
	proxy := testenv.ProxyT(t)
	conn, events, err := zk.Connect([]string{proxy.Addr()}, testSessionTimeout, zk.WithLogger(quiet{}))
	require.NoError(t, err)
	t.Cleanup(conn.Close)
	s, err := recipes.NewSession(bg(), conn, events, append(opts, recipes.WithSessionTimeout(time.Hour),
		recipes.WithTickTime(100*time.Millisecond))...) // the test server's tickTime
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	held, err := newMutex(t, s, path).Lock(bg())
	require.NoError(t, err)

	waiter := newMutex(t, connect(t), path)
	got := lockAndUnlock(waiter, nil)
	waitQueued(t, admin, path, 2)
	proxy.Stall()
	require.NoError(t, <-got, "the waiter never got the lock of the expired session")
	proxy.Restore()
	return held, s
}

// TestSessionExpiryEndsHolds lets ZooKeeper expire a session whose client
// does not give up on its own (its client-side timer is told a far longer
// timeout). The holder is partitioned, a waiter gets the lock once the
// server expires the session, and when the connection comes back the server
// says so: the hold ends with ErrSessionExpired.
func TestSessionExpiryEndsHolds(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/lock"
	held, s := expiredHold(t, admin, path)
	<-held.Done()
	assert.ErrorIs(t, held.Err(), locks.ErrLockLost)
	assert.ErrorIs(t, held.Err(), recipes.ErrSessionExpired)
	<-s.Done()
	assert.Equal(t, recipes.StateExpired, s.State())
	assert.ErrorIs(t, held.Release(bg()), locks.ErrLockLost)
}

// TestNewSessionSendsNothingWhileSuspended: a Lock called while a NewSession
// Session is suspended must not have go-zookeeper queue its create: after
// the server expires the session, go-zookeeper opens a new one on the
// caller's connection and would send the create there, where no Session
// tracks the node and nothing ever deletes it.
func TestNewSessionSendsNothingWhileSuspended(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/lock"
	proxy := testenv.ProxyT(t)
	// Several addresses, as for an ensemble, all through the proxy: after
	// an expiry go-zookeeper moves on to the next and opens a new session.
	conn, events, err := zk.Connect([]string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}, testSessionTimeout,
		zk.WithDialer(proxy.Dialer), zk.WithLogger(quiet{}))
	require.NoError(t, err)
	t.Cleanup(conn.Close)
	s, err := recipes.NewSession(bg(), conn, events, recipes.WithSessionTimeout(testSessionTimeout),
		recipes.WithTickTime(testTickTime))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	witness, err := newMutex(t, s, root+"/witness").Lock(bg()) // its node shows when the server expires the session
	require.NoError(t, err)
	oldID := conn.SessionID()

	proxy.Stall()
	eventually(t, "the session to be suspended", func() bool { return s.State() == recipes.StateSuspended })
	got := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(bg(), waitLong)
		defer cancel()
		_, err := newMutex(t, s, path).Lock(ctx)
		got <- err
	}()
	eventually(t, "the server to expire the session", func() bool { return len(children(t, admin, root+"/witness")) == 0 })
	proxy.Restore()
	require.Error(t, <-got)
	eventually(t, "the connection to have a new session", func() bool {
		return conn.State() == zk.StateHasSession && conn.SessionID() != oldID
	})
	// Anything go-zookeeper had queued is sent before this sync.
	_, err = conn.Sync("/")
	require.NoError(t, err)
	assert.Empty(t, children(t, admin, path), "a lock node on the connection's new session")
	assert.ErrorIs(t, witness.Release(bg()), locks.ErrLockLost)
}
