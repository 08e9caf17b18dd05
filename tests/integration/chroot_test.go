package integration_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/barriers"
	"github.com/zkrecipes/recipes/locks"
	"github.com/zkrecipes/recipes/zktest"
)

// TestChroot: sessions chrooted at different paths do not see each other's
// locks; everything a recipe reports is relative to the chroot, and what it
// is given (Inspect, Revoke) is taken below it.
func TestChroot(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	a := connect(t, recipes.WithChroot(root+"/a"))
	servers := strings.Join(zktest.Servers(t), ",") + root + "/b" // ZooKeeper's own syntax
	b := connectTo(t, []string{servers})
	assert.Equal(t, root+"/b", b.Chroot())

	ha, err := newMutex(t, a, "/lock").Lock(bg())
	require.NoError(t, err)
	hb, ok, err := newMutex(t, b, "/lock").TryLock(bg())
	require.NoError(t, err)
	require.True(t, ok, "the other chroot's lock was taken")
	assert.Len(t, children(t, admin, root+"/a/lock"), 1)
	assert.Len(t, children(t, admin, root+"/b/lock"), 1)
	assert.True(t, strings.HasPrefix(ha.Node(), "/lock/"), "Node %s is not relative to the chroot", ha.Node())
	assert.Equal(t, "/lock", ha.Path())

	us, err := locks.Inspect(bg(), a, "/lock")
	require.NoError(t, err)
	require.Len(t, us, 1)
	require.Len(t, us[0].Participants, 1)
	assert.Equal(t, ha.Node(), us[0].Participants[0].Path)
	assert.True(t, us[0].Participants[0].Holds)

	require.NoError(t, locks.Revoke(bg(), a, ha.Node()))
	<-ha.Revoked()
	require.NoError(t, ha.Release(bg()))
	require.NoError(t, hb.Release(bg()))

	gate, err := barriers.NewBarrier(a, "/gate")
	require.NoError(t, err)
	require.NoError(t, gate.Set(bg()))
	up, err := barriers.NewBarrier(b, "/gate")
	require.NoError(t, err)
	isUp, err := up.IsSet(bg())
	require.NoError(t, err)
	assert.False(t, isUp, "a barrier set under one chroot is up under another")
	ok, _, err = admin.Exists(root + "/a/gate")
	require.NoError(t, err)
	assert.True(t, ok)
	require.NoError(t, gate.Remove(bg()))
}

// TestChrootBadInput: a malformed chroot, or two that disagree, is refused
// before anything is dialled.
func TestChrootBadInput(t *testing.T) {
	t.Parallel()
	servers := strings.Join(zktest.Servers(t), ",")
	for _, c := range []struct {
		servers []string
		opts    []recipes.Option
	}{
		{[]string{servers + "/app/"}, nil},
		{[]string{servers + "/a//b"}, nil},
		{[]string{servers + "/zookeeper"}, nil},
		{[]string{servers}, []recipes.Option{recipes.WithChroot("relative")}},
		{[]string{servers + "/a"}, []recipes.Option{recipes.WithChroot("/b")}},
	} {
		_, err := recipes.Connect(bg(), c.servers, c.opts...)
		assert.ErrorIs(t, err, recipes.ErrInvalid, "%q", c.servers)
	}
}
