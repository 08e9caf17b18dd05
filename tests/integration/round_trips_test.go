package integration_test

import (
	"context"
	"errors"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/internal/znode"
	"github.com/zkrecipes/recipes/locks"
	"github.com/zkrecipes/recipes/zktest"
)

// freeOps is how many free acquisitions each recipe makes while its
// requests are counted.
const freeOps = 40

// TestFreeAcquireIsOneRoundTrip: a recipe nobody else holds is acquired in
// one round trip, its create and the listing that decides going out
// together (seqnode's create), and released in one more.
//
// That the listing is sent before the create's reply comes back is shown
// with the replies held at the proxy, which does not depend on how fast
// the machine is; so is the count of requests, and that no acquisition
// had to list again. The round trips are logged, not checked: on a loaded
// machine the listing can leave after the reply has come back (bench
// measures them). The test runs on a server of its own that reaps empty
// containers as ZooKeeper does by default (every minute, not every 100 ms
// as the other tests' servers do), so that a lock's directory stays
// between acquisitions as it does in production.
func TestFreeAcquireIsOneRoundTrip(t *testing.T) {
	t.Parallel()
	srv, admin, root := newOwnRoot(t, zktest.WithSystemProperty("znode.container.checkIntervalMs", "60000"))
	dirs := []string{root + "/mutex", root + "/rw", root + "/ma", root + "/mb",
		root + "/sm/locks", root + "/sm/leases", root + "/sm", root + "/sem/locks", root + "/sem/leases", root + "/sem"}
	// This server reaps empty containers a minute later, after the test:
	// delete them here, before Root looks for leftovers (cleanups run last
	// in, first out). A node left in them makes the delete fail.
	t.Cleanup(func() {
		for _, dir := range append(dirs, root) {
			if err := admin.Delete(dir, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				t.Errorf("delete %s: %v", dir, err)
			}
		}
	})
	p, err := testenv.NewProxy(srv.Servers()[0])
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	s := connectTo(t, srv.Servers(), recipes.WithDialer(p.Dialer))
	sent := znode.Of(s).Sent()
	require.NotNil(t, sent, "a Connect session shows the recipes its writes")
	ctx := context.Background()

	m := newMutex(t, s, root+"/mutex")
	rw, err := locks.NewRWMutex(s, root+"/rw")
	require.NoError(t, err)
	multi, err := locks.NewMultiMutex(s, []string{root + "/ma", root + "/mb"})
	require.NoError(t, err)
	sm, err := locks.NewSemaphoreMutex(s, root+"/sm")
	require.NoError(t, err)
	sem, err := locks.NewSemaphore(s, root+"/sem", 3)
	require.NoError(t, err)
	cases := []struct {
		name     string
		dir      string // where the first listing goes
		acquire  func() (*locks.Hold, error)
		requests int // for an acquisition and its release
	}{
		{"Mutex.Lock", root + "/mutex", func() (*locks.Hold, error) { return m.Lock(ctx) }, 3},
		{"Mutex.TryLock", root + "/mutex", func() (*locks.Hold, error) {
			h, ok, err := m.TryLock(ctx)
			if err == nil && !ok {
				err = errors.New("TryLock of a free mutex did not take it")
			}
			return h, err
		}, 3},
		{"RWMutex.RLock", root + "/rw", func() (*locks.Hold, error) { return rw.RLock(ctx) }, 3},
		{"RWMutex.Lock", root + "/rw", func() (*locks.Hold, error) { return rw.Lock(ctx) }, 3},
		// Every member at once: one round trip, and one to release.
		{"MultiLock.Lock", root + "/ma", func() (*locks.Hold, error) { return multi.Lock(ctx) }, 6},
		// The gate, then the lease, one round trip each; the gate's delete
		// is not waited for, and the lease's watch of its own node and the
		// release share its round trip.
		{"SemaphoreMutex.Lock", root + "/sm/locks", func() (*locks.Hold, error) { return sm.Lock(ctx) }, 7},
		{"Semaphore.Acquire", root + "/sem/locks", func() (*locks.Hold, error) {
			leases, err := sem.Acquire(ctx, 1)
			if err != nil {
				return nil, err
			}
			return leases[0], nil
		}, 7},
	}
	for _, c := range cases {
		// The first acquisition creates the recipe's directory, and has
		// to list again: its listing went before the directory existed.
		h, err := c.acquire()
		require.NoError(t, err, c.name)
		require.NoError(t, h.Release(ctx), c.name)

		relists := sent.Relists()
		listings := p.Counter(func(op int32, path string) bool {
			return op == testenv.OpGetChildren2 && path == c.dir
		})
		p.StallDown()
		type result struct {
			h   *locks.Hold
			err error
		}
		done := make(chan result, 1)
		go func() {
			h, err := c.acquire()
			done <- result{h, err}
		}()
		eventually(t, c.name+"'s listing sent with its create's reply held", func() bool { return listings() == 1 })
		p.Restore()
		r := <-done
		require.NoError(t, r.err, c.name)
		requireTokens(t, r.h, c.name)
		require.NoError(t, r.h.Release(ctx), c.name)

		before := p.Traffic()
		for range freeOps {
			h, err := c.acquire()
			require.NoError(t, err, c.name)
			requireTokens(t, h, c.name)
			require.NoError(t, h.Release(ctx), c.name)
		}
		got := p.Traffic().Sub(before)
		t.Logf("%s: %d round trips, %d requests for %d acquisitions and releases", c.name, got.RoundTrips, got.Requests, freeOps)
		// The session's keep-alive probe may add a request now and then.
		require.LessOrEqual(t, got.Requests, int64(c.requests*freeOps+2), "%s: requests for %d free acquisitions and releases", c.name, freeOps)
		require.Equal(t, relists, sent.Relists(), "%s: acquisitions that listed again after their create", c.name)
	}
}

// TestDoubleBarrierLastMemberEntersInTwoRoundTrips: a member creates its
// node, watches ready and lists the members in one round trip (the listing
// sent once the create is being written), so the last member is in after a
// second one, the transaction that opens the barrier. Shown with the
// replies held at the proxy: all three requests go out before any reply.
func TestDoubleBarrierLastMemberEntersInTwoRoundTrips(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	path := root + "/db"
	first := newDoubleBarrier(t, connect(t), path, 2)
	entered := make(chan error, 1)
	go func() { entered <- first.Enter(bg()) }()

	s, p := connectCounted(t)
	listings := p.Counter(func(op int32, node string) bool {
		return (op == testenv.OpGetChildren || op == testenv.OpGetChildren2) && node == path
	})
	last := newDoubleBarrier(t, s, path, 2)
	eventually(t, "the first member to wait", func() bool {
		n, _, err := last.Arrived(bg())
		return err == nil && n == 1
	})
	before, listed := p.Traffic(), listings()
	p.StallDown()
	done := make(chan error, 1)
	go func() { done <- last.Enter(bg()) }()
	eventually(t, "the last member's listing sent with its create's reply held", func() bool { return listings() == listed+1 })
	p.Restore()
	require.NoError(t, <-done)
	require.NoError(t, <-entered)
	got := p.Traffic().Sub(before)
	t.Logf("last member: %d requests, %d round trips", got.Requests, got.RoundTrips)
	require.LessOrEqual(t, got.Requests, int64(4+1), "create, watch of ready, listing, the opening transaction (and a keep-alive probe, perhaps)")
	// Leave waits for every member to leave: both at once.
	left := make(chan error, 1)
	go func() { left <- first.Leave(bg()) }()
	require.NoError(t, last.Leave(bg()))
	require.NoError(t, <-left)
}

// requireTokens checks that h knows its fencing token, or, for a
// multi-lock, which has none of its own, that each member knows its own.
func requireTokens(t *testing.T, h *locks.Hold, name string) {
	t.Helper()
	parts := h.Members()
	if parts == nil {
		parts = []*locks.Hold{h}
	}
	for _, p := range parts {
		require.NotZero(t, p.Token(), "%s: %s", name, p.Path())
	}
}
