package integration_test

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/testenv"
)

// TestSessionDeleteGoesOnInTheBackground: a Delete whose context ends while
// the connection is down returns, and the session finishes the delete once
// it is back.
func TestSessionDeleteGoesOnInTheBackground(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	proxy := testenv.ProxyT(t)
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
	proxy := testenv.ProxyT(t)
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

// TestConnectUnreachable: Connect gives up at its connect timeout, or at
// ctx's deadline, and names the last reason an attempt failed; a malformed
// server list is refused before anything is dialled.
func TestConnectUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := ln.Addr().String()
	require.NoError(t, ln.Close())

	_, err = recipes.Connect(bg(), []string{closed}, recipes.WithConnectTimeout(time.Second))
	require.Error(t, err)
	assert.ErrorIs(t, err, syscall.ECONNREFUSED)
	assert.Contains(t, err.Error(), "connect timeout")

	ctx, cancel := context.WithTimeout(bg(), time.Second)
	defer cancel()
	_, err = recipes.Connect(ctx, []string{closed})
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorIs(t, err, syscall.ECONNREFUSED)

	var dialled atomic.Bool
	dialer := recipes.WithDialer(func(network, addr string, timeout time.Duration) (net.Conn, error) {
		dialled.Store(true)
		return nil, errors.New("dialled")
	})
	for _, servers := range [][]string{nil, {""}, {"127.0.0.1:notaport"}, {"a:1,,b:2"}, {"h:2181/bad//chroot"}} {
		_, err := recipes.Connect(bg(), servers, dialer)
		assert.ErrorIs(t, err, recipes.ErrInvalid, "%q", servers)
	}
	for _, opt := range []recipes.Option{recipes.WithSessionTimeout(0), recipes.WithConnectTimeout(-1),
		recipes.WithTickTime(-time.Second), recipes.WithTickTime(recipes.DefaultSessionTimeout)} {
		_, err := recipes.Connect(bg(), []string{closed}, dialer, opt)
		assert.ErrorIs(t, err, recipes.ErrInvalid)
	}
	assert.False(t, dialled.Load(), "bad input was dialled")

	ended, cancel := context.WithCancel(bg())
	cancel()
	_, err = recipes.Connect(ended, []string{closed}, dialer)
	assert.ErrorIs(t, err, context.Canceled)
	assert.False(t, dialled.Load(), "an ended context was dialled")
}

// TestConnectToALateServer: a server that comes up long after Connect
// started grants a session whose clock starts then, not when Connect was
// called; the session must not count the wait against it.
func TestConnectToALateServer(t *testing.T) {
	t.Parallel()
	proxy := testenv.ProxyT(t)
	proxy.Cut() // refuses every connection until Restore
	const timeout = 2 * time.Second
	type result struct {
		s   *recipes.Session
		err error
	}
	got := make(chan result, 1)
	go func() {
		s, err := recipes.Connect(bg(), []string{proxy.Addr()}, recipes.WithSessionTimeout(timeout),
			recipes.WithConnectTimeout(waitLong))
		got <- result{s, err}
	}()
	// Let the attempts fail for longer than the session timeout.
	time.Sleep(timeout + timeout/2)
	proxy.Restore()
	r := <-got
	require.NoError(t, r.err)
	defer r.s.Close()
	select {
	case <-r.s.Done():
		t.Fatalf("the session ended at once: %v", r.s.Err())
	case <-time.After(timeout):
	}
	assert.NoError(t, r.s.Err())
}
