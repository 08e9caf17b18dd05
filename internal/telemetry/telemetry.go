// Package telemetry is where the recipes report what they do: log/slog
// records and OpenTelemetry metrics, through the Recorder their session
// carries. The metrics' names and units are listed in docs/observability.md;
// a Recorder over the no-op meter provider costs next to nothing.
package telemetry

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// ScopeName is the instrumentation scope of every instrument.
const ScopeName = "github.com/zkrecipes/recipes"

// Results of an acquisition.
const (
	Acquired = "acquired" // the hold was granted
	Busy     = "busy"     // a try found the lock taken
	Canceled = "canceled" // the caller's context ended first
	Failed   = "error"    // anything else: ZooKeeper, the session, bad state
)

// Causes of a loss.
const (
	CauseSessionExpired = "session_expired"
	CauseSessionLost    = "session_lost"
	CauseSessionClosed  = "session_closed"
	CauseNodeDeleted    = "node_deleted"
)

// A Recorder records the recipes' events for one session.
type Recorder struct {
	log          *slog.Logger
	slow         time.Duration
	acquisitions metric.Int64Counter
	wait         metric.Float64Histogram
	hold         metric.Float64Histogram
	losses       metric.Int64Counter
	revocations  metric.Int64Counter
	states       metric.Int64Counter
	requests     metric.Int64Counter
}

// SlowAcquisition is how long an acquisition waits before its grant is
// logged at Info rather than Debug.
const SlowAcquisition = time.Second

// New makes a Recorder that logs to log (nil: nowhere) and measures through
// mp's meter.
func New(mp metric.MeterProvider, log *slog.Logger) *Recorder {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := mp.Meter(ScopeName)
	r := &Recorder{log: log, slow: SlowAcquisition}
	// The API's instruments never fail to be made: with a bad name it
	// returns a working no-op one and the error, which is ours to avoid.
	counter := func(name, unit, what string) metric.Int64Counter {
		c, _ := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(what))
		return c
	}
	seconds := func(name, what string) metric.Float64Histogram {
		h, _ := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(what))
		return h
	}
	r.acquisitions = counter("zkrecipes.acquisitions", "{acquisition}", "Acquisitions of locks and leases, by recipe and result.")
	r.wait = seconds("zkrecipes.acquisition.duration", "How long an acquisition took, waiting included, by recipe and result.")
	r.hold = seconds("zkrecipes.hold.duration", "How long a hold lasted, by recipe and how it ended (released or lost).")
	r.losses = counter("zkrecipes.losses", "{loss}", "Holds lost, by recipe and cause.")
	r.revocations = counter("zkrecipes.revocations", "{revocation}", "Revocation requests seen by holders, by recipe.")
	r.states = counter("zkrecipes.session.states", "{change}", "Session states entered, the initial one included.")
	r.requests = counter("zkrecipes.requests", "{request}", "ZooKeeper operations the recipes ran through the session, retries included.")
	return r
}

// Logger is where the recipes log.
func (r *Recorder) Logger() *slog.Logger { return r.log }

// Acquisition records an acquisition of recipe at path, begun at start,
// that returned ok and err on ctx: acquired, busy (a try), canceled (ctx
// ended) or failed.
func (r *Recorder) Acquisition(ctx context.Context, recipe, path string, start time.Time, ok bool, err error) {
	d := time.Since(start)
	result := Acquired
	switch {
	case err != nil && ctx.Err() != nil:
		result = Canceled
	case err != nil:
		result = Failed
	case !ok:
		result = Busy
	}
	k := attributeKey{recipe, "result", result}
	o, found := attributeSets.Load(k)
	if !found {
		o = storeAttributes(k)
	}
	attrs := o.(measurementOptions)
	r.acquisitions.Add(ctx, 1, attrs.add...)
	r.wait.Record(ctx, d.Seconds(), attrs.record...)
	switch {
	case result == Failed:
		r.log.LogAttrs(ctx, slog.LevelWarn, "acquisition failed", slog.String("recipe", recipe), slog.String("path", path),
			slog.Duration("waited", d), slog.Any("error", err))
	case result == Acquired && d >= r.slow:
		r.log.LogAttrs(ctx, slog.LevelInfo, "slow acquisition", slog.String("recipe", recipe), slog.String("path", path),
			slog.Duration("waited", d))
	case r.log.Enabled(ctx, slog.LevelDebug):
		r.log.LogAttrs(ctx, slog.LevelDebug, "acquisition", slog.String("recipe", recipe), slog.String("path", path),
			slog.String("result", result), slog.Duration("waited", d))
	}
}

// HoldEnded records the end of a hold of recipe at path granted at start:
// released if lost is nil, else lost with that cause.
func (r *Recorder) HoldEnded(recipe, path string, start time.Time, lost error, cause string) {
	ctx := context.Background()
	end := "released"
	if lost != nil {
		end = "lost"
		r.losses.Add(ctx, 1, storeAttributes(attributeKey{recipe, "cause", cause}).add...)
		r.log.LogAttrs(ctx, slog.LevelWarn, "lock lost", slog.String("recipe", recipe), slog.String("path", path),
			slog.String("cause", cause), slog.Any("error", lost))
	}
	k := attributeKey{recipe, "end", end}
	o, found := attributeSets.Load(k)
	if !found {
		o = storeAttributes(k)
	}
	r.hold.Record(ctx, time.Since(start).Seconds(), o.(measurementOptions).record...)
}

// attributeSets holds the attribute options of the recorder's
// measurements, made once each: recipe names and the values of result,
// end and cause are the library's own few, and options built at each
// measurement cost every acquisition and hold allocations.
var attributeSets sync.Map // attributeKey -> measurementOptions

type attributeKey struct{ recipe, key, value string }

// measurementOptions is one attribute set as the options an Add and a
// Record take, slices kept so that passing them allocates nothing.
type measurementOptions struct {
	add    []metric.AddOption
	record []metric.RecordOption
}

// storeAttributes returns the options of k, made and stored in
// attributeSets if they are not there yet. The recorder's hot paths look
// them up themselves and call it only when they miss.
func storeAttributes(k attributeKey) measurementOptions {
	if o, ok := attributeSets.Load(k); ok {
		return o.(measurementOptions)
	}
	set := metric.WithAttributeSet(attribute.NewSet(attribute.String("recipe", k.recipe), attribute.String(k.key, k.value)))
	o, _ := attributeSets.LoadOrStore(k, measurementOptions{[]metric.AddOption{set}, []metric.RecordOption{set}})
	return o.(measurementOptions)
}

// WaitsForOwnSession records that an acquisition of the lock at path waits
// for node, which its own session created: another goroutine's hold, or
// this call chain's own (a nested Lock given the outer hold's acquire
// context rather than its Context), which it would wait for forever.
func (r *Recorder) WaitsForOwnSession(ctx context.Context, path, node string) {
	r.log.LogAttrs(ctx, slog.LevelWarn, "lock waits for a node of its own session",
		slog.String("path", path), slog.String("node", node),
		slog.String("hint", "if this call chain holds it, this waits for itself: to re-enter a hold h, pass h.Context() to Lock"))
}

// Revoked records a revocation request seen by a holder of recipe at path.
func (r *Recorder) Revoked(recipe, path string) {
	r.revocations.Add(context.Background(), 1, metric.WithAttributes(attribute.String("recipe", recipe)))
	r.log.LogAttrs(context.Background(), slog.LevelInfo, "revocation requested",
		slog.String("recipe", recipe), slog.String("path", path))
}

// State records that the session entered state; err is why it ended, if
// it did.
func (r *Recorder) State(state string, err error) {
	r.states.Add(context.Background(), 1, metric.WithAttributes(attribute.String("state", state)))
	level := slog.LevelInfo
	if err != nil {
		level = slog.LevelWarn
	}
	r.log.LogAttrs(context.Background(), level, "zookeeper session", slog.String("state", state), slog.Any("error", err))
}

// Request records one request sent; retried is true for a retry after a
// connection problem (logged at Debug with why).
func (r *Recorder) Request(ctx context.Context, retried error) {
	r.requests.Add(ctx, 1)
	if retried != nil {
		r.log.LogAttrs(ctx, slog.LevelDebug, "retrying after a connection problem", slog.Any("error", retried))
	}
}

// Cause classifies a loss error: the errors it wraps are given by the
// caller, since this package cannot import the recipes'.
func Cause(lost error, expired, sessionLost, closed error) string {
	switch {
	case errors.Is(lost, expired):
		return CauseSessionExpired
	case errors.Is(lost, sessionLost):
		return CauseSessionLost
	case errors.Is(lost, closed):
		return CauseSessionClosed
	}
	return CauseNodeDeleted
}
