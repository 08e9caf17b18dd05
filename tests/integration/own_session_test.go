package integration_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/locks"
)

// recordsHandler sends every record at Warn or above to a channel, for a
// test to wait on.
type recordsHandler struct{ records chan slog.Record }

func (h recordsHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (h recordsHandler) Handle(_ context.Context, r slog.Record) error {
	select {
	case h.records <- r.Clone():
	default: // the test reads what it waits for; drop the rest
	}
	return nil
}
func (h recordsHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h recordsHandler) WithGroup(string) slog.Handler      { return h }

// awaitRecord waits for a record with message msg about path and returns
// its attributes.
func awaitRecord(t *testing.T, records <-chan slog.Record, msg, path string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(bg(), waitLong)
	defer cancel()
	for {
		select {
		case r := <-records:
			if r.Message != msg {
				continue
			}
			attrs := map[string]string{"level": r.Level.String()}
			r.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.String(); return true })
			if attrs["path"] == path {
				return attrs
			}
		case <-ctx.Done():
			t.Fatalf("no %q record", msg)
			return nil
		}
	}
}

// TestNestedLockWithTheAcquireContextIsReported: a nested Lock given the
// context that acquired the outer hold, not the hold's Context, waits for
// itself (Go has no thread identity to re-enter by). The session's logger
// is told, naming the path and h.Context(); cancelling ends the wait and
// leaves nothing behind. So for a read lock asked under a write hold.
func TestNestedLockWithTheAcquireContextIsReported(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	records := make(chan slog.Record, 64)
	s := connect(t, recipes.WithSlog(slog.New(recordsHandler{records})))
	m := newMutex(t, s, root+"/mutex")
	rw := newRWMutex(t, s, root+"/rw")
	for _, c := range []struct {
		path         string
		outer, inner func(context.Context) (*locks.Hold, error)
	}{
		{root + "/mutex", m.Lock, m.Lock},
		{root + "/rw", rw.Lock, rw.RLock},
	} {
		ctx, cancel := context.WithCancel(bg())
		h, err := c.outer(ctx)
		require.NoError(t, err)
		nested := make(chan error, 1)
		go func() {
			_, err := c.inner(ctx) // the outer's acquire context: waits for itself
			nested <- err
		}()
		attrs := awaitRecord(t, records, "lock waits for a node of its own session", c.path)
		assert.Equal(t, "WARN", attrs["level"])
		assert.Equal(t, h.Token(), tokenOf(t, admin, attrs["node"]), "the node named is not the outer hold's")
		assert.Contains(t, attrs["hint"], "h.Context()")
		cancel()
		assert.ErrorIs(t, <-nested, context.Canceled)
		require.NoError(t, h.Release(bg()))
		assert.Empty(t, children(t, admin, c.path))
	}
}

// tokenOf returns the zxid that created the node at path.
func tokenOf(t *testing.T, admin *zk.Conn, path string) int64 {
	t.Helper()
	_, st, err := admin.Get(path)
	require.NoError(t, err)
	return st.Czxid
}
