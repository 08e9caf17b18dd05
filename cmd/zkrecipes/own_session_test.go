package main_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/locks"
	"github.com/zkrecipes/recipes/zktest"
)

// TestInspectMarksAWaiterOfItsOwnSession: a nested Lock given the outer
// hold's acquire context waits for its own session's node; inspect says so,
// and only for that waiter.
func TestInspectMarksAWaiterOfItsOwnSession(t *testing.T) {
	t.Parallel()
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/mutex"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sess, err := recipes.Connect(ctx, zktest.Servers(t))
	require.NoError(t, err)
	defer sess.Close()
	m, err := locks.NewMutex(sess, path)
	require.NoError(t, err)
	h, err := m.Lock(ctx)
	require.NoError(t, err)
	defer func() { assert.NoError(t, h.Release(context.Background())) }()
	other := command(t, "lock", path, "--", "true") // another session, queued after
	nestedCtx, stopNested := context.WithCancel(ctx)
	nested := make(chan error, 1)
	go func() {
		_, err := m.Lock(nestedCtx) // waits for h's node: its own session's
		nested <- err
	}()
	waitNodes(t, admin, path, 2)
	require.NoError(t, other.Start())
	defer stop(other)
	waitNodes(t, admin, path, 3)

	code, out, stderr := zkrecipes(t, "inspect", path)
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `waiter 1 mutex .* \(a node of its own session\)`, out)
	assert.NotRegexp(t, `waiter 2 .*own session`, out)
	code, out, stderr = zkrecipes(t, "inspect", "--json", path)
	require.Equal(t, 0, code, stderr)
	var in struct {
		Waiters []struct {
			OwnSession bool `json:"waits_for_own_session"`
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &in), out)
	require.Len(t, in.Waiters, 2, out)
	assert.True(t, in.Waiters[0].OwnSession, out)
	assert.False(t, in.Waiters[1].OwnSession, out)

	stopNested()
	assert.ErrorIs(t, <-nested, context.Canceled)
}
