// Package integration_test holds the integration tests: every recipe against a
// real ZooKeeper server that the harness starts on loopback (or the servers in
// ZK_SERVERS).
package integration_test

import (
	"context"
	"math"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/locks"
	"github.com/zkrecipes/recipes/zktest"
)

func TestMain(m *testing.M) {
	if runWorker() {
		return
	}
	goleak.VerifyTestMain(zktest.WithServer(m))
}

// testSessionTimeout is short so that loss tests finish quickly; the test
// server allows sessions down to 200 ms. Such a session is declared lost
// when no proof of life comes for 2.7 s, which a loaded machine can cause
// by itself: only tests of losses ask for it.
const testSessionTimeout = 3 * time.Second

// steadySessionTimeout is the session timeout of connect and connectTo: a
// session that a loaded 2-core machine, running the suite beside another
// copy of it, does not lose (with 3 s, tests that lose nothing on purpose
// lost sessions with "no proof of life" and a cut-and-restore test waited
// for ever for a reconnect that came after the loss). Loss tests that want
// to end quickly pass WithSessionTimeout(testSessionTimeout).
const steadySessionTimeout = 10 * time.Second

// testTickTime is the test servers' tickTime (internal/zkserver). Telling
// the sessions lets them ride out the stalls of a loaded test machine; tests
// of the default tickTime bound pass WithTickTime(0).
const testTickTime = 100 * time.Millisecond

// waitLong bounds any wait for something that should happen promptly.
const waitLong = 30 * time.Second

// newRoot returns an admin connection and a fresh root path for t, checked
// for leftover nodes when t ends. Call it before opening sessions, so that
// they are closed before the check.
func newRoot(t *testing.T) (*zk.Conn, string) {
	t.Helper()
	admin := zktest.Connect(t, zktest.Servers(t))
	return admin, zktest.Root(t, admin)
}

// newOwnRoot is newRoot on a server of the test's own, started with opts.
func newOwnRoot(t *testing.T, opts ...zktest.Option) (*zktest.Server, *zk.Conn, string) {
	t.Helper()
	srv := zktest.Start(t, opts...)
	admin := zktest.Connect(t, srv.Servers())
	return srv, admin, zktest.Root(t, admin)
}

// smallBuffer starts a server whose jute.maxbuffer is 8 KiB, so that a
// test can make requests it drops (by closing the connection) cheaply.
var smallBuffer = zktest.WithSystemProperty("jute.maxbuffer", "8192")

// connect opens a session to the shared server (steadySessionTimeout unless
// opts say otherwise), closed when t ends.
func connect(t *testing.T, opts ...recipes.Option) *recipes.Session {
	t.Helper()
	return connectTo(t, zktest.Servers(t), opts...)
}

// connectTo opens a session to servers, closed when t ends.
func connectTo(t *testing.T, servers []string, opts ...recipes.Option) *recipes.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	opts = append([]recipes.Option{recipes.WithSessionTimeout(steadySessionTimeout), recipes.WithTickTime(testTickTime)}, opts...)
	s, err := recipes.Connect(ctx, servers, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// connectCounted opens a session through a proxy of its own, whose Traffic
// counts the session's requests and watch notifications.
func connectCounted(t *testing.T, opts ...recipes.Option) (*recipes.Session, *testenv.Proxy) {
	t.Helper()
	p := testenv.ProxyT(t)
	return connectTo(t, zktest.Servers(t), append(opts, recipes.WithDialer(p.Dialer))...), p
}

func newMutex(t *testing.T, s *recipes.Session, path string, opts ...recipes.NodeOption) *locks.Mutex {
	t.Helper()
	m, err := locks.NewMutex(s, path, opts...)
	require.NoError(t, err)
	return m
}

// children lists path's children; a missing path has none.
func children(t *testing.T, conn *zk.Conn, path string) []string {
	t.Helper()
	names, _, err := conn.Children(path)
	if err == zk.ErrNoNode {
		return nil
	}
	require.NoError(t, err)
	return names
}

// eventually waits for cond, polling; for states only visible by asking.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitQueued waits until path has n lock nodes.
func waitQueued(t *testing.T, conn *zk.Conn, path string, n int) {
	t.Helper()
	eventually(t, "lock nodes to queue", func() bool { return len(children(t, conn, path)) == n })
}

func bg() context.Context { return context.Background() }

// lockAndUnlock takes l in the background, within waitLong, sets entered
// (if not nil) once it holds it, and releases it at once; the channel
// reports how that went.
func lockAndUnlock(l locks.Locker, entered *atomic.Bool) <-chan error {
	got := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(bg(), waitLong)
		defer cancel()
		h, err := l.Lock(ctx)
		if err == nil {
			if entered != nil {
				entered.Store(true)
			}
			err = h.Release(bg())
		}
		got <- err
	}()
	return got
}

// wchp returns the "wchp" four-letter word of the server at addr: each
// watched path, followed by the sessions that watch it. The answer is
// awaited, not timed: the shared server lists the watches of every test
// running beside this one, and on a loaded machine that can take well over
// the second a four-letter word usually needs.
func wchp(t *testing.T, addr string) string {
	t.Helper()
	out, err := testenv.FourLetterWord(addr, "wchp", waitLong)
	require.NoError(t, err)
	return out
}

// pastJavaInt is 2^31, one more than Curator's limit on a count (a Java
// int); 0 where an int cannot hold it (on 32 bits), where the checks of it
// are left out: no count there can be past the limit.
var pastJavaInt = func() int {
	if strconv.IntSize < 64 {
		return 0
	}
	n := int64(math.MaxInt32) + 1
	return int(n)
}()
