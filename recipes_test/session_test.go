package recipes_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
)

// TestSessionDeleteGoesOnInTheBackground: a Delete whose context ends while
// the connection is down returns, and the session finishes the delete once
// it is back.
func TestSessionDeleteGoesOnInTheBackground(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	proxy := newProxy(t)
	states := make(stateLog, 16)
	s := connect(t, recipes.WithDialer(proxy.Dialer), recipes.WithStateListener(states.listener),
		recipes.WithSessionTimeout(10*time.Second))
	node := root + "-node"
	_, err := admin.Create(node, nil, zk.FlagPersistent, aclAll)
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.Delete(node, -1) }) // if the test fails half way

	proxy.Cut()
	states.waitFor(t, recipes.StateSuspended)
	ctx, cancel := context.WithTimeout(bg(), 100*time.Millisecond)
	defer cancel()
	err = s.Delete(ctx, node)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	ok, _, err := admin.Exists(node)
	require.NoError(t, err)
	require.True(t, ok, "deleted while cut off?")

	proxy.Restore()
	states.waitFor(t, recipes.StateReconnected)
	eventually(t, "the background delete", func() bool {
		ok, _, err := admin.Exists(node)
		return err == nil && !ok
	})
	require.NoError(t, s.Close())
}

// TestSessionRetryAcrossADisconnect: an operation started while the
// connection is down (go-zookeeper fails or holds it) completes once the
// session is back, and Retry returns its result.
func TestSessionRetryAcrossADisconnect(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	proxy := newProxy(t)
	states := make(stateLog, 16)
	s := connect(t, recipes.WithDialer(proxy.Dialer), recipes.WithStateListener(states.listener),
		recipes.WithSessionTimeout(10*time.Second))
	proxy.Cut()
	states.waitFor(t, recipes.StateSuspended)
	done := make(chan error, 1)
	go func() {
		done <- s.Retry(bg(), func(conn *zk.Conn) error {
			_, _, err := conn.Exists(root)
			return err
		})
	}()
	proxy.Restore()
	require.NoError(t, <-done)
	assert.Equal(t, recipes.StateReconnected, s.State())
}
