package telemetry

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// TestRecordingAnAcquisitionAllocatesNothing: past the first of each
// kind, recording an acquisition and the end of its hold builds nothing,
// through a no-op meter and a logger that discards: the attribute sets are
// made once.
func TestRecordingAnAcquisitionAllocatesNothing(t *testing.T) {
	r := New(noop.NewMeterProvider(), nil)
	ctx := context.Background()
	start := time.Now()
	record := func() {
		r.Acquisition(ctx, "mutex", "/lock", start, true, nil)
		r.Acquisition(ctx, "mutex", "/lock", start, false, nil)
		r.HoldEnded("mutex", "/lock", start, nil, "")
	}
	record()
	if n := testing.AllocsPerRun(100, record); n != 0 {
		t.Fatalf("recording allocates %v times", n)
	}
}

// TestAttributesAreTheirOwn: each recipe, key and value has its set, the
// same for an Add and a Record.
func TestAttributesAreTheirOwn(t *testing.T) {
	for _, c := range []struct{ recipe, key, value string }{
		{"mutex", "result", Acquired},
		{"semaphore", "result", Acquired},
		{"mutex", "result", Busy},
		{"mutex", "end", "released"},
		{"mutex", "result", Acquired}, // again, from the cache
	} {
		o := storeAttributes(attributeKey{c.recipe, c.key, c.value})
		want := attribute.NewSet(attribute.String("recipe", c.recipe), attribute.String(c.key, c.value))
		if got := metric.NewAddConfig(o.add).Attributes(); !got.Equals(&want) {
			t.Errorf("%v: Add's attributes %v", c, got.ToSlice())
		}
		if got := metric.NewRecordConfig(o.record).Attributes(); !got.Equals(&want) {
			t.Errorf("%v: Record's attributes %v", c, got.ToSlice())
		}
	}
}
