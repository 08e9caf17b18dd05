package integration_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/barriers"
	"github.com/zkrecipes/recipes/internal/zkserver"
	"github.com/zkrecipes/recipes/locks"
)

// The credentials of two services that share a parent.
const (
	billingUser = "billing:secret"
	payrollUser = "payroll:hunter2"
)

// assertRefused asserts that err is ZooKeeper's refusal and names the node
// whose ACL refused it and the permission it needed there.
func assertRefused(t *testing.T, err error, perm, node, doing string) {
	t.Helper()
	if !assert.ErrorIs(t, err, zk.ErrNoAuth, doing) {
		return
	}
	assert.Contains(t, err.Error(), "needs "+perm+" permission on "+node+"", doing)
	assert.False(t, strings.Contains(err.Error(), "needs "+perm+" permission on "+node+"/"),
		"%s: names a node below %s: %v", doing, node, err)
}

// TestTwoServicesShareAParent: two identities with creator-only ACLs lock
// /shared/a/job and /shared/b/job, whichever of them creates /shared. Both
// hold at once; neither can read, join, revoke or delete the other's nodes,
// and each refusal names the node and the permission; the nodes survive.
func TestTwoServicesShareAParent(t *testing.T) {
	t.Parallel()
	for _, order := range [][2]string{{"a", "b"}, {"b", "a"}} {
		t.Run(order[0]+" first", func(t *testing.T) {
			t.Parallel()
			admin, root := newRoot(t)
			shared := root + "/shared"
			users := map[string]string{"a": billingUser, "b": payrollUser}
			sessions := map[string]*recipes.Session{}
			holds := map[string]*locks.Hold{}
			for _, svc := range order {
				sessions[svc] = connectAs(t, users[svc])
				h, err := newMutex(t, sessions[svc], shared+"/"+svc+"/job").Lock(bg())
				require.NoError(t, err, "%s locks its job", svc)
				holds[svc] = h
			}

			// What each node got: the shared parent is its creator's, with
			// create and read for everyone; each service's parent is its
			// own, likewise; each lock directory is its service's alone.
			first := strings.SplitN(users[order[0]], ":", 2)[0]
			assertACL(t, shared, first, true)
			for svc, user := range users {
				name := strings.SplitN(user, ":", 2)[0]
				assertACL(t, shared+"/"+svc, name, true)
				assertACL(t, shared+"/"+svc+"/job", name, false)
			}

			for _, pair := range [][2]string{{"a", "b"}, {"b", "a"}} {
				me, other := sessions[pair[0]], pair[1]
				job := shared + "/" + other + "/job"
				held := holds[other]

				_, _, err := newMutex(t, me, job).TryLock(bg())
				assertRefused(t, err, "create", job, pair[0]+" joins "+other+"'s lock")
				_, err = locks.Inspect(bg(), me, job)
				assertRefused(t, err, "read", job, pair[0]+" inspects "+other+"'s lock")
				_, err = newMutex(t, me, job).Participants(bg())
				assertRefused(t, err, "read", job, pair[0]+" lists "+other+"'s lock")
				assertRefused(t, locks.Revoke(bg(), me, held.Node()), "write", held.Node(), pair[0]+" revokes "+other+"'s hold")
				assertRefused(t, me.Delete(bg(), held.Node()), "delete", job, pair[0]+" deletes "+other+"'s lock node")
				assertRefused(t, me.Delete(bg(), job), "delete", shared+"/"+other, pair[0]+" deletes "+other+"'s lock")
				if pair[0] == order[1] {
					// The service that did not create /shared may not
					// delete what is in it.
					assertRefused(t, me.Delete(bg(), shared+"/"+other), "delete", shared, pair[0]+" deletes "+other+"'s parent")
				}
				assert.NoError(t, held.Err(), "%s's hold survived", other)
				ok, _, err := admin.Exists(held.Node())
				require.NoError(t, err)
				assert.True(t, ok, "%s's lock node survived", other)
			}
			for _, h := range holds {
				require.NoError(t, h.Release(bg()))
			}
		})
	}
}

// assertACL asserts that the node at path belongs to user (digest), and
// that everyone else may create and read below it (shared) or nothing. It
// reads the ACL as the harness's super user.
func assertACL(t *testing.T, path, user string, shared bool) {
	t.Helper()
	acl, _, err := connectAsAdmin(t, zkserver.SuperCredentials).GetACL(path)
	require.NoError(t, err, path)
	var owner, world int32
	for _, a := range acl {
		switch {
		case a.Scheme == "digest" && strings.HasPrefix(a.ID, user+":"):
			owner |= a.Perms
		case a.Scheme == "world" && a.ID == "anyone":
			world |= a.Perms
		default:
			t.Errorf("%s: unexpected ACL entry %s:%s", path, a.Scheme, a.ID)
		}
	}
	assert.Equal(t, int32(zk.PermAll), owner, "%s: %s's permissions", path, user)
	want := int32(0)
	if shared {
		want = zk.PermCreate | zk.PermRead
	}
	assert.Equal(t, want, world, "%s: everyone's permissions", path)
}

// TestTwoServicesLockAtOnce: two identities with creator-only ACLs that
// lock beside each other at the same moment, racing to create the shared
// parent, both get their locks.
func TestTwoServicesLockAtOnce(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	shared := root + "/shared"
	mutexes := []*locks.Mutex{
		newMutex(t, connectAs(t, billingUser), shared+"/a/job"),
		newMutex(t, connectAs(t, payrollUser), shared+"/b/job"),
	}
	holds := make([]*locks.Hold, len(mutexes))
	errs := make([]error, len(mutexes))
	var wg sync.WaitGroup
	for i, m := range mutexes {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(bg(), waitLong)
			defer cancel()
			holds[i], errs[i] = m.Lock(ctx)
		})
	}
	wg.Wait()
	for i := range mutexes {
		require.NoError(t, errs[i])
	}
	for _, h := range holds {
		require.NoError(t, h.Release(bg()))
	}
}

// TestParentACLOption: WithParentACL sets the parents' ACL; CreatorOnly
// there gives the shared parent to its creator alone, as Curator's
// CREATOR_ALL_ACL does, and another identity's lock beside is refused with
// an error that names the parent and the permission.
func TestParentACLOption(t *testing.T) {
	t.Parallel()
	admin, root := openRoot(t)
	shared := root + "/shared"
	first := connectAs(t, billingUser, recipes.WithParentACL(recipes.CreatorOnly()))
	h, err := newMutex(t, first, shared+"/a/job").Lock(bg())
	require.NoError(t, err)
	assertACL(t, shared, "billing", false)
	assertACL(t, shared+"/a", "billing", false)

	_, _, err = newMutex(t, connectAs(t, payrollUser), shared+"/b/job").TryLock(bg())
	assertRefused(t, err, "create", shared, "locking beside a creator-only parent")
	require.NoError(t, h.Release(bg()))
	ok, _, err := admin.Exists(shared + "/b")
	require.NoError(t, err)
	assert.False(t, ok, "the refused lock created nothing")

	// The default with the open ACL is the open ACL, as in Curator.
	s := connect(t)
	assert.Equal(t, recipes.OpenACL(), s.ParentACL())
	h, err = newMutex(t, s, root+"/open/job").Lock(bg())
	require.NoError(t, err)
	acl, _, err := admin.GetACL(root + "/open")
	require.NoError(t, err)
	assert.Equal(t, recipes.OpenACL(), acl)
	require.NoError(t, h.Release(bg()))
}

// openRoot is newRoot with the root created, open to everyone (as a
// container, which the leftover check allows), so that the first ACL'd
// session below it does not make it its own.
func openRoot(t *testing.T) (*zk.Conn, string) {
	t.Helper()
	admin, root := newRoot(t)
	_, err := admin.CreateContainer(root, nil, zk.FlagContainer, recipes.OpenACL())
	require.NoError(t, err)
	return admin, root
}

// TestRefusalsNameNodeAndPermission: every recipe call that ZooKeeper's
// access control refuses says which node refused it and which permission it
// needed there.
func TestRefusalsNameNodeAndPermission(t *testing.T) {
	t.Parallel()
	_, root := openRoot(t)
	owner := connectAs(t, billingUser, recipes.WithParentACL(recipes.CreatorOnly()))
	intruder := connectAs(t, payrollUser)
	ctx := bg()

	// A barrier and the parent it sits in, both the owner's.
	gate := root + "/private/gate"
	b, err := barriers.NewBarrier(owner, gate)
	require.NoError(t, err)
	require.NoError(t, b.Set(ctx))
	ib, err := barriers.NewBarrier(intruder, gate)
	require.NoError(t, err)
	assertRefused(t, ib.Remove(ctx), "delete", root+"/private", "removing the barrier")
	_, err = barriers.Inspect(ctx, intruder, gate)
	assertRefused(t, err, "read", gate, "inspecting the barrier")
	require.NoError(t, b.Remove(ctx))

	// Locks and the rest in a directory of the owner's.
	dir := root + "/private/dir"
	held, err := newMutex(t, owner, dir+"/mutex").Lock(ctx)
	require.NoError(t, err)
	defer func() { require.NoError(t, held.Release(bg())) }()
	keep, err := barriers.NewBarrier(owner, dir+"/keep") // keeps dir from being reaped
	require.NoError(t, err)
	require.NoError(t, keep.Set(ctx))
	defer func() { require.NoError(t, keep.Remove(bg())) }()

	sem, err := locks.NewSemaphore(intruder, dir+"/sem", 2)
	require.NoError(t, err)
	_, err = sem.Acquire(ctx, 1)
	assertRefused(t, err, "create", dir, "a semaphore")
	rw, err := locks.NewRWMutex(intruder, dir+"/mutex")
	require.NoError(t, err)
	_, _, err = rw.TryRLock(ctx)
	assertRefused(t, err, "create", dir+"/mutex", "a read lock")
	db, err := barriers.NewDoubleBarrier(intruder, dir+"/double", 2)
	require.NoError(t, err)
	assertRefused(t, db.Enter(ctx), "create", dir, "entering a double barrier")
	ibar, err := barriers.NewBarrier(intruder, dir+"/gate")
	require.NoError(t, err)
	assertRefused(t, ibar.Set(ctx), "create", dir, "setting a barrier")
	assertRefused(t, locks.SetSharedCount(ctx, intruder, dir+"/count", 3), "create", dir, "creating a shared count")

	// A shared count of the owner's, which the intruder can neither read
	// nor change.
	count := root + "/private/count"
	require.NoError(t, locks.SetSharedCount(ctx, owner, count, 1))
	defer func() { require.NoError(t, owner.Delete(bg(), count)) }()
	assertRefused(t, locks.SetSharedCount(ctx, intruder, count, 3), "read", count, "changing the owner's shared count")
	csem, err := locks.NewSharedCountSemaphore(intruder, root+"/open-sem", count)
	require.NoError(t, err)
	_, err = csem.Acquire(ctx, 1)
	assertRefused(t, err, "read", count, "a semaphore on the owner's shared count")

	// A hold's Multi names the op ZooKeeper refused.
	mine, err := newMutex(t, intruder, root+"/open/mutex").Lock(ctx)
	require.NoError(t, err)
	_, err = mine.Multi(ctx, &zk.CreateRequest{Path: dir + "/x", Acl: zk.WorldACL(zk.PermAll)})
	assertRefused(t, err, "create", dir, "a multi")
	require.NoError(t, mine.Release(ctx))
}
