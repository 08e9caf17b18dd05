package integration_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/locks"
	"github.com/zkrecipes/recipes/zktest"
)

// TestTelemetry: after a scripted sequence (a free lock, a contended one, a
// try that finds it busy, a wait cut short, a revocation, a loss when the
// client-side deadline passes and one when the server expires the session) the metrics read through an in-memory OpenTelemetry reader
// count exactly that, and the log says it.
func TestTelemetry(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	path := root + "/lock"
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	var log testenv.Buffer
	logger := slog.New(slog.NewJSONHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	observed := []recipes.Option{recipes.WithMeterProvider(mp), recipes.WithSlog(logger)}

	s := connect(t, observed...)
	m := newMutex(t, s, path)
	h, err := m.Lock(bg()) // 1: free
	require.NoError(t, err)
	require.NoError(t, h.Release(bg()))

	other, err := newMutex(t, connect(t), path).Lock(bg())
	require.NoError(t, err)
	_, ok, err := m.TryLock(bg()) // 2: busy
	require.NoError(t, err)
	require.False(t, ok)
	ctx, cancel := context.WithTimeout(bg(), 100*time.Millisecond)
	_, err = m.Lock(ctx) // 3: canceled
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	got := make(chan *locks.Hold, 1)
	go func() {
		h, err := m.Lock(bg()) // 4: acquired after a wait
		assert.NoError(t, err)
		got <- h
	}()
	waitQueued(t, zktest.Connect(t, zktest.Servers(t)), path, 2)
	require.NoError(t, other.Release(bg()))
	h = <-got
	revoked := h.Revoked() // the holder listens for revocation
	require.NoError(t, locks.Revoke(bg(), connect(t), h.Node()))
	<-revoked
	require.NoError(t, h.Release(bg()))

	proxy := testenv.ProxyT(t)
	doomed := connect(t, append(observed, recipes.WithDialer(proxy.Dialer))...)
	lost, err := newMutex(t, doomed, path).Lock(bg()) // 5: acquired, then lost
	require.NoError(t, err)
	proxy.Stall()
	<-lost.Done()
	<-doomed.Done()
	proxy.Restore()
	admin := zktest.Connect(t, zktest.Servers(t))
	eventually(t, "the lost session's node to expire", func() bool { return len(children(t, admin, path)) == 0 })

	// 6: acquired, then lost when the server expires the session: a session
	// over a borrowed connection, told a long timeout, hears of its expiry
	// from the server when its connection comes back.
	expired, _ := expiredHold(t, admin, path, observed...)
	<-expired.Done()
	require.ErrorIs(t, expired.Err(), recipes.ErrSessionExpired)

	// A hold's end is told first (Done) and recorded just after; a
	// session's end closes its Done before it records the state.
	var rm metricdata.ResourceMetrics
	mutex := attribute.String("recipe", "mutex")
	eventually(t, "the expired hold's loss and session to be recorded", func() bool {
		require.NoError(t, reader.Collect(bg(), &rm))
		return sum(t, rm, "zkrecipes.losses", mutex, attribute.String("cause", "session_expired")) > 0 &&
			count(t, rm, "zkrecipes.hold.duration", mutex, attribute.String("end", "lost")) > 1 &&
			sum(t, rm, "zkrecipes.session.states", attribute.String("state", "lost")) > 0 &&
			sum(t, rm, "zkrecipes.session.states", attribute.String("state", "expired")) > 0
	})
	assert.Equal(t, int64(4), sum(t, rm, "zkrecipes.acquisitions", mutex, attribute.String("result", "acquired")))
	assert.Equal(t, int64(1), sum(t, rm, "zkrecipes.acquisitions", mutex, attribute.String("result", "busy")))
	assert.Equal(t, int64(1), sum(t, rm, "zkrecipes.acquisitions", mutex, attribute.String("result", "canceled")))
	assert.Equal(t, uint64(6), count(t, rm, "zkrecipes.acquisition.duration", mutex))
	assert.Equal(t, uint64(2), count(t, rm, "zkrecipes.hold.duration", mutex, attribute.String("end", "released")))
	assert.Equal(t, uint64(2), count(t, rm, "zkrecipes.hold.duration", mutex, attribute.String("end", "lost")))
	assert.Equal(t, int64(1), sum(t, rm, "zkrecipes.losses", mutex, attribute.String("cause", "session_lost")))
	assert.Equal(t, int64(1), sum(t, rm, "zkrecipes.losses", mutex, attribute.String("cause", "session_expired")))
	assert.Equal(t, int64(1), sum(t, rm, "zkrecipes.revocations", mutex))
	assert.Equal(t, int64(3), sum(t, rm, "zkrecipes.session.states", attribute.String("state", "connected")),
		"the initial state of the three observed sessions")
	assert.Equal(t, int64(1), sum(t, rm, "zkrecipes.session.states", attribute.String("state", "lost")))
	assert.Equal(t, int64(1), sum(t, rm, "zkrecipes.session.states", attribute.String("state", "expired")))
	assert.Positive(t, sum(t, rm, "zkrecipes.requests"))

	for _, msg := range []string{`"msg":"lock lost"`, `"msg":"revocation requested"`, `"state":"connected"`, `"state":"lost"`} {
		assert.Contains(t, log.String(), msg)
	}
}

// sum is the value of the counter name over the points that have attrs.
func sum(t *testing.T, rm metricdata.ResourceMetrics, name string, attrs ...attribute.KeyValue) int64 {
	t.Helper()
	var total int64
	for _, p := range find(t, rm, name).Data.(metricdata.Sum[int64]).DataPoints {
		if hasAll(p.Attributes, attrs) {
			total += p.Value
		}
	}
	return total
}

// count is how many values the histogram name recorded with attrs.
func count(t *testing.T, rm metricdata.ResourceMetrics, name string, attrs ...attribute.KeyValue) uint64 {
	t.Helper()
	var n uint64
	for _, p := range find(t, rm, name).Data.(metricdata.Histogram[float64]).DataPoints {
		if hasAll(p.Attributes, attrs) {
			n += p.Count
		}
	}
	return n
}

func find(t *testing.T, rm metricdata.ResourceMetrics, name string) metricdata.Metrics {
	t.Helper()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m
			}
		}
	}
	t.Fatalf("no metric %s", name)
	return metricdata.Metrics{}
}

func hasAll(set attribute.Set, attrs []attribute.KeyValue) bool {
	for _, a := range attrs {
		if v, ok := set.Value(a.Key); !ok || v != a.Value {
			return false
		}
	}
	return true
}
