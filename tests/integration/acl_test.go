package integration_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/barriers"
	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/internal/testenv/curatortest/eventlog"
	"github.com/zkrecipes/recipes/locks"
	"github.com/zkrecipes/recipes/zktest"
)

// The credentials of the tests' ACL'd locks.
const (
	aclUser  = "locker:secret"
	aclOther = "intruder:guess"
)

// connectAs opens a session that authenticates as user:password and gives
// the nodes it creates to that identity only.
func connectAs(t *testing.T, userPassword string, opts ...recipes.Option) *recipes.Session {
	t.Helper()
	return connect(t, append(opts, recipes.WithAuth("digest", userPassword), recipes.WithACL(recipes.CreatorOnly()))...)
}

// TestCreatorOnlyACL: a lock whose nodes belong to one identity excludes a
// client without it: that client can neither join, inspect nor delete the
// holder's node, and is told why. A client with the same credentials takes
// the lock after the holder, and its session's credentials outlive a
// reconnect.
func TestCreatorOnlyACL(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t) // the root is world-open; the lock below it is not
	path := root + "/acl/lock"
	holder := newMutex(t, connectAs(t, aclUser), path)
	held, err := holder.Lock(bg())
	require.NoError(t, err)
	owner := connectAsAdmin(t, aclUser)
	acl, _, err := owner.GetACL(path)
	require.NoError(t, err)
	require.Len(t, acl, 1)
	assert.Equal(t, "digest", acl[0].Scheme)
	assert.True(t, strings.HasPrefix(acl[0].ID, "locker:"), "the lock directory belongs to %s", acl[0].ID)

	// No credentials, or others: no way in, and a clear error.
	for _, s := range []*recipes.Session{connect(t), connectAs(t, aclOther)} {
		m := newMutex(t, s, path)
		_, _, err := m.TryLock(bg())
		assert.ErrorIs(t, err, zk.ErrNoAuth, "joining")
		_, err = locks.Inspect(bg(), s, path)
		assert.ErrorIs(t, err, zk.ErrNoAuth, "inspecting")
		assert.ErrorIs(t, s.Conn().Delete(held.Node(), -1), zk.ErrNoAuth, "deleting the holder's node")
	}
	assert.NoError(t, held.Err(), "the hold survived the attempts")

	// The same identity, from a session whose connection is cut and comes
	// back (its credentials are sent again), takes the lock next.
	proxy := testenv.ProxyT(t)
	states := make(stateLog, 16)
	s := connectAs(t, aclUser, recipes.WithDialer(proxy.Dialer), recipes.WithStateListener(states.listener))
	proxy.Cut()
	states.waitFor(t, recipes.StateSuspended)
	proxy.Restore()
	states.waitFor(t, recipes.StateReconnected)
	next := newMutex(t, s, path)
	got := make(chan *locks.Hold, 1)
	go func() {
		h, err := next.Lock(bg())
		assert.NoError(t, err)
		got <- h
	}()
	waitQueued(t, owner, path, 2)
	require.NoError(t, held.Release(bg()))
	h := <-got
	require.NotNil(t, h)
	require.NoError(t, h.Release(bg()))
}

// connectAsAdmin is a plain go-zookeeper connection authenticated as
// userPassword, for looking at ACL'd nodes.
func connectAsAdmin(t *testing.T, userPassword string) *zk.Conn {
	t.Helper()
	conn := zktest.Connect(t, zktest.Servers(t))
	require.NoError(t, conn.AddAuth("digest", []byte(userPassword)))
	return conn
}

// TestACLBarrier: barriers' nodes, and the parents made for them, get the
// session's ACL too (deleting a node takes the delete permission of its
// parent, so the parent's ACL is what keeps others from removing it).
func TestACLBarrier(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	path := root + "/protected/gate"
	b, err := barriers.NewBarrier(connectAs(t, aclUser), path)
	require.NoError(t, err)
	require.NoError(t, b.Set(bg()))
	acl, _, err := connectAsAdmin(t, aclUser).GetACL(path)
	require.NoError(t, err)
	assert.Equal(t, "digest", acl[0].Scheme)
	other, err := barriers.NewBarrier(connect(t), path)
	require.NoError(t, err)
	assert.ErrorIs(t, other.Remove(bg()), zk.ErrNoAuth)
	require.NoError(t, b.Remove(bg()))
}

// TestAuthAndACLBadInput: bad credentials and ACLs are refused before any
// connection is made.
func TestAuthAndACLBadInput(t *testing.T) {
	t.Parallel()
	dialled := false
	dialer := recipes.WithDialer(func(string, string, time.Duration) (net.Conn, error) {
		dialled = true
		return nil, errors.New("dialled")
	})
	for name, opts := range map[string][]recipes.Option{
		"no scheme":                 {recipes.WithAuth("", "a:b")},
		"digest without a password": {recipes.WithAuth("digest", "justauser")},
		"empty ACL":                 {recipes.WithACL(nil)},
		"no permissions":            {recipes.WithACL([]zk.ACL{{Perms: 0, Scheme: "world", ID: "anyone"}})},
		"unknown permissions":       {recipes.WithACL([]zk.ACL{{Perms: 64, Scheme: "world", ID: "anyone"}})},
		"ACL with no scheme":        {recipes.WithACL([]zk.ACL{{Perms: zk.PermAll}})},
		"world but not anyone":      {recipes.WithACL([]zk.ACL{{Perms: zk.PermAll, Scheme: "world", ID: "someone"}})},
		"creator-only, no identity": {recipes.WithACL(recipes.CreatorOnly())},
		"nobody may create":         {recipes.WithACL([]zk.ACL{{Perms: zk.PermAll &^ zk.PermCreate, Scheme: "world", ID: "anyone"}})},
		"nobody may delete":         {recipes.WithACL([]zk.ACL{{Perms: zk.PermRead | zk.PermCreate, Scheme: "world", ID: "anyone"}})},
	} {
		_, err := recipes.Connect(bg(), zktest.Servers(t), append(opts, dialer)...)
		assert.ErrorIs(t, err, recipes.ErrInvalid, name)
		assert.NotContains(t, err.Error(), "justauser", "%s: credentials in the error", name)
	}
	assert.False(t, dialled, "a connection was attempted")

	// A TLS client certificate is an identity (ZooKeeper's x509 provider)
	// that CreatorOnly can give the nodes to: not refused.
	ctx, cancel := context.WithTimeout(bg(), 100*time.Millisecond)
	defer cancel()
	_, err := recipes.Connect(ctx, zktest.Servers(t), dialer, recipes.WithACL(recipes.CreatorOnly()),
		recipes.WithTLS(&tls.Config{Certificates: []tls.Certificate{{}}}))
	assert.NotErrorIs(t, err, recipes.ErrInvalid)
}

// TestCreatorOnlyACLInteropWithCurator: a Curator client with the same
// credentials and CREATOR_ALL_ACL and a Go session with CreatorOnly share one
// ACL'd lock and exclude each other. Whichever creates the lock directory
// gives it to the shared identity, so the other gets in only because it
// authenticated as that identity.
func TestCreatorOnlyACLInteropWithCurator(t *testing.T) {
	t.Parallel()
	const iterations = 10
	_, root := newRoot(t)
	path := root + "/acl/lock"
	log := filepath.Join(t.TempDir(), "events")
	java := [][]string{append([]string{"--auth=digest:" + aclUser}, javaArgs(t, 0, "mutex", path, log, iterations)...)}
	m := newMutex(t, connectAs(t, aclUser), path)
	events := interop(t, log, java, []goHolder{{eventlog.KindMutex, m.Lock}}, iterations)
	stats, err := eventlog.Check(events, map[string]int{eventlog.KindMutex: 1})
	require.NoError(t, err)
	s := stats[eventlog.KindMutex]
	assert.Equal(t, 2*iterations, s.Entries)
	assert.Equal(t, 1, s.MaxActive)
}
