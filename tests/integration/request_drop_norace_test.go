//go:build !race

// Built without the race detector only: `make test` runs this file in a run
// of its own without -race. A reconnect reads go-zookeeper v1.0.4's lastZxid
// unsynchronised as it restores the session's watches (docs/faults.md), and
// this test reconnects over and over: under -race, go-zookeeper's own race
// failed about one loaded run in four. The code it tests, Session.Retry's
// gate, runs under -race in TestDroppedRequestFailsOnlyItsCall.

package integration_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
)

// TestConcurrentDroppedRequestsKeepTheSession: calls at once whose requests
// a server with a small jute.maxbuffer drops fail each with
// ErrRequestDropped; no request is sent until the session's keep-alive has
// been answered since the last connection closed under a call, so a short
// session keeps its proof of life through the reconnects, and works after.
// Without that gate, new calls close connection after connection with no
// proof in between, and the session is lost.
//
// TestDroppedRequestFailsOnlyItsCall shows another hold surviving drops.
func TestConcurrentDroppedRequestsKeepTheSession(t *testing.T) {
	t.Parallel()
	srv, admin, root := newOwnRoot(t, smallBuffer)
	s := connectTo(t, srv.Servers(), recipes.WithSessionTimeout(4*time.Second))
	big := newMutex(t, s, root+"/big", recipes.WithData(make([]byte, 16<<10)))
	ctx, cancel := context.WithTimeout(bg(), 2*waitLong)
	defer cancel()

	const callers = 3
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for range callers {
		wg.Go(func() {
			_, err := big.Lock(ctx)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.ErrorIs(t, err, recipes.ErrRequestDropped)
	}
	require.NoError(t, s.Err(), "the session")
	require.NoError(t, lockOnce(ctx, newMutex(t, s, root+"/small").Lock), "a lock on the session after the drops")
	assert.Empty(t, children(t, admin, root+"/big"), "nodes left")
}
