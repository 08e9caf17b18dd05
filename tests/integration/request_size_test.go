package integration_test

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/barriers"
	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/locks"
)

// largestPacket records the largest request a session's connections write
// (go-zookeeper writes each request whole, with one Write).
type largestPacket struct {
	mu      sync.Mutex
	largest int
}

func (l *largestPacket) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	return &packetConn{Conn: c, l: l}, nil
}

func (l *largestPacket) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.largest = 0
}

func (l *largestPacket) get() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.largest
}

type packetConn struct {
	net.Conn
	l *largestPacket
}

func (c *packetConn) Write(p []byte) (int, error) {
	if len(p) >= 4 && int(binary.BigEndian.Uint32(p))+4 == len(p) {
		c.l.mu.Lock()
		c.l.largest = max(c.l.largest, len(p)-4)
		c.l.mu.Unlock()
	}
	return c.Conn.Write(p)
}

// sizedRecipe makes a recipe at a path and uses it once: takes and releases
// a lock, sets and removes a barrier.
type sizedRecipe struct {
	name string
	// exact: with data, the request that bounds the path is a create that
	// grows a byte with each byte of path, and is sent as checked (an
	// RWMutex checks its downgrade's create with the longest sequence, a
	// double barrier its opening transaction, which carries the path twice).
	exact bool
	make  func(s *recipes.Session, path string, opts ...recipes.NodeOption) (use func(ctx context.Context) error, err error)
}

var sizedRecipes = []sizedRecipe{
	{"mutex", true, func(s *recipes.Session, path string, opts ...recipes.NodeOption) (func(context.Context) error, error) {
		m, err := locks.NewMutex(s, path, opts...)
		return func(ctx context.Context) error { return lockOnce(ctx, m.Lock) }, err
	}},
	{"rwmutex", false, func(s *recipes.Session, path string, opts ...recipes.NodeOption) (func(context.Context) error, error) {
		rw, err := locks.NewRWMutex(s, path, opts...)
		return func(ctx context.Context) error {
			// Write, then downgrade: the read node takes the write
			// node's sequence in its create.
			w, err := rw.Lock(ctx)
			if err != nil {
				return err
			}
			r, err := rw.RLock(w.Context())
			if err == nil {
				err = r.Release(ctx)
			}
			if rerr := w.Release(ctx); err == nil {
				err = rerr
			}
			return err
		}, err
	}},
	{"semaphore", true, func(s *recipes.Session, path string, opts ...recipes.NodeOption) (func(context.Context) error, error) {
		sem, err := locks.NewSemaphore(s, path, 2, opts...)
		return func(ctx context.Context) error {
			leases, err := sem.Acquire(ctx, 1)
			if err != nil {
				return err
			}
			return leases[0].Release(ctx)
		}, err
	}},
	{"barrier", true, func(s *recipes.Session, path string, opts ...recipes.NodeOption) (func(context.Context) error, error) {
		b, err := barriers.NewBarrier(s, path, opts...)
		return func(ctx context.Context) error {
			if err := b.Set(ctx); err != nil {
				return err
			}
			return b.Remove(ctx)
		}, err
	}},
	{"double-barrier", false, func(s *recipes.Session, path string, opts ...recipes.NodeOption) (func(context.Context) error, error) {
		b, err := barriers.NewDoubleBarrier(s, path, 1, opts...)
		return func(ctx context.Context) error {
			if err := b.Enter(ctx); err != nil {
				return err
			}
			return b.Leave(ctx)
		}, err
	}},
}

// clip is the start and the end of an error that may quote a long path.
func clip(s string) string {
	if len(s) <= 600 {
		return s
	}
	return s[:300] + " ... " + s[len(s)-300:]
}

func lockOnce(ctx context.Context, lock func(context.Context) (*locks.Hold, error)) error {
	h, err := lock(ctx)
	if err != nil {
		return err
	}
	return h.Release(ctx)
}

// longestAccepted is the longest padding the recipe's constructor takes for
// root + "/" + padding.
func longestAccepted(t *testing.T, r sizedRecipe, s *recipes.Session, root string, opts ...recipes.NodeOption) int {
	t.Helper()
	lo, hi := 0, 1<<20 // lo is accepted, hi is not
	_, err := r.make(s, root+"/p", opts...)
	require.NoError(t, err, "the shortest path")
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if _, err := r.make(s, root+"/"+strings.Repeat("p", mid), opts...); err == nil {
			lo = mid
		} else {
			require.ErrorIs(t, err, recipes.ErrInvalid)
			hi = mid
		}
	}
	return lo
}

// TestLargestRequestGoesThrough: for each recipe, with the most data a
// recipe takes and without data, the longest path its constructor accepts
// works against the real server (whose jute.maxbuffer is ZooKeeper's
// default), and makes a request of exactly recipes.MaxRequest bytes or less;
// a byte more is refused with ErrInvalid, naming the limit and the size,
// and creates nothing.
func TestLargestRequestGoesThrough(t *testing.T) {
	t.Parallel()
	// A server of its own: ZooKeeper keeps recent transactions in memory
	// (up to commitLogCount, 500), these are a MiB each, and the shared
	// server's heap (256 MiB) serves every other test of the package.
	srv, admin, root := newOwnRoot(t)
	var wire largestPacket
	// Requests of a MiB are slow to send and to log on a loaded machine.
	s := connectTo(t, srv.Servers(), recipes.WithDialer(wire.dial), recipes.WithSessionTimeout(10*time.Second))
	ctx, cancel := context.WithTimeout(bg(), waitLong)
	defer cancel()
	for _, r := range sizedRecipes {
		for _, data := range [][]byte{make([]byte, recipes.MaxDataSize), {}} {
			name := r.name + "/" + strconv.Itoa(len(data))
			opts := []recipes.NodeOption{recipes.WithData(data)}
			pad := longestAccepted(t, r, s, root, opts...)
			longest := root + "/" + strings.Repeat("p", pad)

			_, err := r.make(s, longest+"p", opts...)
			require.ErrorIs(t, err, recipes.ErrInvalid, name)
			assert.Contains(t, err.Error(), "1048575 bytes", name)
			assert.Contains(t, err.Error(), "-byte request", name)
			ok, _, err := admin.Exists(root)
			require.NoError(t, err)
			assert.False(t, ok, "%s: refused input created %s", name, root)

			use, err := r.make(s, longest, opts...)
			require.NoError(t, err, name)
			wire.reset()
			if err := use(ctx); err != nil {
				t.Fatalf("%s with a %d-byte path: %s", name, len(longest), clip(err.Error()))
			}
			switch {
			case len(data) > 0 && r.exact:
				assert.Equal(t, recipes.MaxRequest, wire.get(), "%s: the largest request sent", name)
			case len(data) > 0:
				assert.InDelta(t, recipes.MaxRequest, wire.get(), 2, "%s: the largest request sent", name)
			default:
				assert.LessOrEqual(t, wire.get(), recipes.MaxRequest, name)
			}
			require.NoError(t, zktestDeleteAll(admin, root), name)
		}
	}
}

// zktestDeleteAll deletes root and what is under it: a recipe's containers
// may stay until ZooKeeper reaps them, and the next case must find the path
// free.
func zktestDeleteAll(conn *zk.Conn, root string) error {
	children, _, err := conn.Children(root)
	if err == zk.ErrNoNode {
		return nil
	}
	if err != nil {
		return err
	}
	for _, c := range children {
		if err := zktestDeleteAll(conn, root+"/"+c); err != nil {
			return err
		}
	}
	if err := conn.Delete(root, -1); err != nil && err != zk.ErrNoNode {
		return err
	}
	return nil
}

// TestOversizedRequestsAreRefused: issue 18's cases, refused by the
// constructor before anything is sent: a path that leaves no room for the
// most data, and a 1 MiB path without data. The chroot and the ACL count
// too: the longest path shrinks by the chroot's length, and by what a
// larger ACL adds.
func TestOversizedRequestsAreRefused(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	s := connect(t)
	_, err := locks.NewMutex(s, root+"/prog/"+strings.Repeat("x", 1100), recipes.WithData(make([]byte, recipes.MaxDataSize)))
	require.ErrorIs(t, err, recipes.ErrInvalid)
	assert.Contains(t, err.Error(), "1048575")
	_, err = locks.NewMutex(s, root+"/prog/"+strings.Repeat("x", 1<<20), recipes.WithData(nil))
	require.ErrorIs(t, err, recipes.ErrInvalid)
	assert.Less(t, len(err.Error()), 500, "the error does not quote the whole path")
	_, err = barriers.NewDoubleBarrier(s, root+"/b", 1<<20)
	assert.ErrorIs(t, err, recipes.ErrInvalid, "a double barrier whose opening transaction is too large")
	ok, _, err := admin.Exists(root)
	require.NoError(t, err)
	assert.False(t, ok, "refused input created %s", root)

	mutex := sizedRecipes[0]
	data := recipes.WithData(make([]byte, recipes.MaxDataSize)) // the create is the largest request
	plain := longestAccepted(t, mutex, s, root, data)
	chroot := "/" + strings.Repeat("c", 99)
	chrooted := connect(t, recipes.WithChroot(chroot))
	assert.Equal(t, plain-len(chroot), longestAccepted(t, mutex, chrooted, root, data), "with a chroot")
	extra := zk.DigestACL(zk.PermAll, "user", "password")
	acl := append(recipes.OpenACL(), extra...)
	wide := connect(t, recipes.WithACL(acl))
	entry := 4 + 4 + len(extra[0].Scheme) + 4 + len(extra[0].ID)
	assert.Equal(t, plain-entry, longestAccepted(t, mutex, wide, root, data), "with a larger ACL")
}

// TestHoldMultiRefusesOversizedOps: a transaction under a hold that would be
// larger than ZooKeeper takes is refused, unsent, with ErrInvalid; the hold
// and the session carry on.
func TestHoldMultiRefusesOversizedOps(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	s := connect(t)
	m := newMutex(t, s, root+"/lock")
	h, err := m.Lock(bg())
	require.NoError(t, err)
	node := root + "/data"
	_, err = h.Multi(bg(), &zk.CreateRequest{Path: node, Data: make([]byte, recipes.MaxRequest), Acl: recipes.OpenACL()})
	require.ErrorIs(t, err, recipes.ErrInvalid)
	assert.Contains(t, err.Error(), "1048575")
	_, err = h.Multi(bg(), (*zk.DeleteRequest)(nil))
	require.ErrorIs(t, err, recipes.ErrInvalid)
	ok, _, err := admin.Exists(node)
	require.NoError(t, err)
	assert.False(t, ok)
	require.NoError(t, h.Err())
	_, err = h.Multi(bg(), &zk.CreateRequest{Path: node, Data: []byte("fits"), Acl: recipes.OpenACL(), Flags: zk.FlagEphemeral})
	require.NoError(t, err)
	require.NoError(t, h.Release(bg()))
}

// TestDroppedRequestFailsOnlyItsCall: against a server whose jute.maxbuffer
// is below what the recipes check (so the constructor lets the recipe
// through), a lock whose create the server drops fails with
// ErrRequestDropped after MaxDrops tries; the session, a hold on it, and
// calls the session makes meanwhile (another lock, taken and released over
// and over) carry on, and nothing is left behind.
func TestDroppedRequestFailsOnlyItsCall(t *testing.T) {
	t.Parallel()
	srv, admin, root := newOwnRoot(t, smallBuffer)
	proxy, err := testenv.NewProxy(srv.Addr())
	require.NoError(t, err)
	t.Cleanup(func() { _ = proxy.Close() })
	s := connectTo(t, srv.Servers(), recipes.WithDialer(proxy.Dialer), recipes.WithSessionTimeout(10*time.Second))

	other, err := newMutex(t, s, root+"/other").Lock(bg())
	require.NoError(t, err)
	big := newMutex(t, s, root+"/big", recipes.WithData(make([]byte, 16<<10)))
	creates := proxy.Counter(func(op int32, path string) bool {
		return op == testenv.OpCreate && strings.HasPrefix(path, root+"/big/")
	})
	ctx, cancel := context.WithTimeout(bg(), waitLong)
	defer cancel()
	busy := newMutex(t, s, root+"/busy")
	stop := make(chan struct{})
	busyErr := make(chan error, 1)
	go func() {
		rounds := 0
		for {
			select {
			case <-stop:
				if rounds == 0 {
					busyErr <- errors.New("no round")
					return
				}
				busyErr <- nil
				return
			default:
			}
			if err := lockOnce(ctx, busy.Lock); err != nil {
				busyErr <- err
				return
			}
			rounds++
		}
	}()
	_, err = big.Lock(ctx)
	close(stop)
	require.NoError(t, <-busyErr, "a lock taken and released meanwhile")
	require.ErrorIs(t, err, recipes.ErrRequestDropped)
	assert.Contains(t, err.Error(), "jute.maxbuffer")
	assert.Equal(t, int64(recipes.MaxDrops), creates(), "tries")

	require.NoError(t, s.Err(), "the session")
	require.NoError(t, other.Err(), "the other hold")
	require.NoError(t, other.Context().Err(), "the other hold's context")
	assert.Empty(t, children(t, admin, root+"/big"), "nodes left")
	// The session still works: the other lock is released, and taken again.
	require.NoError(t, other.Release(bg()))
	require.NoError(t, lockOnce(bg(), newMutex(t, s, root+"/other").Lock))
}

// TestDroppedOpeningFailsTheEnter: a double barrier whose opening
// transaction a server with a small jute.maxbuffer drops (its member's
// create is taken) fails Enter with ErrRequestDropped, where it used to send
// it again and again; the session carries on and the member's node is gone.
func TestDroppedOpeningFailsTheEnter(t *testing.T) {
	t.Parallel()
	srv, admin, root := newOwnRoot(t, smallBuffer)
	s := connectTo(t, srv.Servers(), recipes.WithSessionTimeout(10*time.Second))
	// The member's create carries the path once, the opening twice.
	path := root + "/" + strings.Repeat("b", 2000)
	b, err := barriers.NewDoubleBarrier(s, path, 1, recipes.WithData(make([]byte, 5000)))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(bg(), waitLong)
	defer cancel()
	err = b.Enter(ctx)
	require.ErrorIs(t, err, recipes.ErrRequestDropped)
	require.NoError(t, s.Err(), "the session")
	assert.Empty(t, children(t, admin, path), "nodes left")
}

// TestDroppedMarkedReleaseDeletesPlainly: a hold that waited releases with
// the mark of its node, a transaction that carries the path three times; a
// server with a small jute.maxbuffer that took the create drops it. The
// release then deletes the node plainly: it is gone, and the next waiter
// gets the lock.
func TestDroppedMarkedReleaseDeletesPlainly(t *testing.T) {
	t.Parallel()
	srv, admin, root := newOwnRoot(t, smallBuffer)
	path := root + "/" + strings.Repeat("p", 3000-len(root))
	first, err := newMutex(t, connectTo(t, srv.Servers()), path).Lock(bg())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(bg(), waitLong)
	defer cancel()
	s2 := connectTo(t, srv.Servers())
	second := lockInBackground(t, admin, s2, ctx, path, 2)
	third := lockInBackground(t, admin, connectTo(t, srv.Servers()), ctx, path, 3)
	// The second waits (its release is then marked) once it watches the
	// first's node.
	head := inQueueOrder(t, admin, path)[0]
	eventually(t, "the second to watch the first", func() bool { return watchedOn(t, srv.Addr(), head, s2.ID()) })
	require.NoError(t, first.Release(bg()))
	r := <-second
	require.NoError(t, r.err)
	require.NoError(t, r.hold.Release(ctx), "the release")
	assert.ErrorIs(t, r.hold.Err(), locks.ErrReleased)
	r = <-third
	require.NoError(t, r.err, "the waiter behind")
	assert.Len(t, children(t, admin, path), 1, "only the third's node is left")
	require.NoError(t, r.hold.Release(bg()))
}
