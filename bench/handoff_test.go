package bench_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/election"
	"github.com/zkrecipes/recipes/internal/testenv/curatortest"
	"github.com/zkrecipes/recipes/locks"
)

// settle is how long an election benchmark waits once the next
// participant's node is there before the leader goes, so that the next one
// is watching the node ahead of its own (a campaign creates its node, then
// lists, then watches: a round trip or two after the create). The Java
// peer's bench-latch-handoff waits as long.
const settle = 20 * time.Millisecond

// handoffRounds is the least number of hand-offs BenchmarkHandoff/curator
// counts (more with -benchtime Nx), after the Java peer's 20 not counted.
const handoffRounds = 100

// BenchmarkHandoff measures the hand-off after a resignation: two
// participants, each on a session of its own, take turns to lead one
// election; while one leads the other campaigns, and once its node is
// there (seen by an observer, then settle) the leader resigns. A hand-off
// is the time from the resignation until the other leads:
//
//   - latch: our election.Latch, from Hold.Release until the other's
//     Campaign returns, both in this process.
//   - curator-latch: Curator's LeaderLatch in the Java peer
//     (bench-latch-handoff), from LeaderLatch.close until the other's await
//     returns, timed there with System.nanoTime.
//   - selector: our election.Selector, as latch.
//   - curator-selector: Curator's LeaderSelector (bench-selector-handoff),
//     from the leader's takeLeadership returning until the other's is
//     called; each requeues when its term ends.
//
// ns/op is the mean hand-off (not the benchmark's time, which includes each
// round's campaign and wait), with p50-ms and p90-ms of its distribution;
// ours also report reqs/op, rtts/op and watches/op per term (a campaign and
// a resignation) as counted on their sessions' socket.
func BenchmarkHandoff(b *testing.B) {
	runInTurn(b,
		sub{"latch", func(b *testing.B) { benchHandoff(b, newLatch) }},
		sub{"curator-latch", func(b *testing.B) { benchCuratorHandoff(b, "bench-latch-handoff") }},
		sub{"selector", func(b *testing.B) { benchHandoff(b, newSelector) }},
		sub{"curator-selector", func(b *testing.B) { benchCuratorHandoff(b, "bench-selector-handoff") }})
}

func newLatch(sess *recipes.Session, path, id string) (election.Campaigner, error) {
	return election.NewLatch(sess, path, id)
}

func newSelector(sess *recipes.Session, path, id string) (election.Campaigner, error) {
	return election.NewSelector(sess, path, id)
}

// benchHandoff is BenchmarkHandoff for ours, with candidates from mk.
func benchHandoff(b *testing.B, mk func(sess *recipes.Session, path, id string) (election.Campaigner, error)) {
	admin, root := newRoot(b)
	path := root + "/election"
	p := newProxy(b)
	var candidates [2]election.Campaigner
	for i := range candidates {
		c, err := mk(connect(b, p), path, strconv.Itoa(i))
		if err != nil {
			b.Fatal(err)
		}
		candidates[i] = c
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	term, err := candidates[0].Campaign(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var took []time.Duration
	before := p.Traffic()
	for b.Loop() {
		led := campaign(ctx, candidates[(len(took)+1)%2])
		waitChildren(b, admin, path, 2)
		time.Sleep(settle)
		start := time.Now()
		if err := term.Release(ctx); err != nil {
			b.Fatal(err)
		}
		r := <-led
		if r.err != nil {
			b.Fatal(r.err)
		}
		took = append(took, r.at.Sub(start))
		term = r.term
	}
	if err := term.Release(ctx); err != nil {
		b.Fatal(err)
	}
	reportTraffic(b, len(took), p.Traffic().Sub(before))
	reportHandoffs(b, took)
}

// benchCuratorHandoff is BenchmarkHandoff for Curator's, with the Java
// peer's mode.
func benchCuratorHandoff(b *testing.B, mode string) {
	_, root := newRoot(b)
	peer := curatortest.EnsureT(b)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := peer.Run(ctx, mode, newProxy(b).Addr(), root+"/election", strconv.Itoa(max(b.N, handoffRounds)))
	if err != nil {
		b.Fatal(err)
	}
	ns, ok := strings.CutPrefix(strings.TrimSpace(out), "ns=")
	if !ok {
		b.Fatalf("Curator peer printed %q", out)
	}
	var took []time.Duration
	for f := range strings.SplitSeq(ns, ",") {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			b.Fatalf("Curator peer printed %q: %v", out, err)
		}
		took = append(took, time.Duration(n))
	}
	reportHandoffs(b, took)
}

// reportHandoffs reports the mean of took as ns/op, and its median and 90th
// percentile in milliseconds.
func reportHandoffs(b *testing.B, took []time.Duration) {
	b.Helper()
	if len(took) == 0 {
		b.Fatal("no hand-off measured")
	}
	var sum time.Duration
	for _, d := range took {
		sum += d
	}
	b.ReportMetric(float64(sum.Nanoseconds())/float64(len(took)), "ns/op")
	b.ReportMetric(ms(percentile(took, 0.5)), "p50-ms")
	b.ReportMetric(ms(percentile(took, 0.9)), "p90-ms")
}

// A campaigned is what a campaign in the background came to, and when.
type campaigned struct {
	at   time.Time // when Campaign returned
	term *locks.Hold
	err  error
}

// campaign campaigns with c in the background. The channel receives the
// outcome once, stamped as soon as Campaign returns; ending ctx ends the
// campaign.
func campaign(ctx context.Context, c election.Campaigner) <-chan campaigned {
	ch := make(chan campaigned, 1)
	go func() {
		term, err := c.Campaign(ctx)
		ch <- campaigned{time.Now(), term, err}
	}()
	return ch
}

// waitChildren waits until path has n children, polling through admin.
func waitChildren(b *testing.B, admin *zk.Conn, path string, n int) []string {
	b.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		names, _, err := admin.Children(path)
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			b.Fatal(err)
		}
		if len(names) == n {
			return names
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s has children %v, want %d", path, names, n)
		}
		time.Sleep(time.Millisecond) // polling the server's state
	}
}

// percentile returns the q-quantile of ds by the nearest rank (q = 0.5:
// the median; 0 and 1: the least and the most).
func percentile(ds []time.Duration, q float64) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// ms returns d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// msList formats ds in milliseconds, for a log line.
func msList(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%.0f", ms(d))
	}
	return strings.Join(parts, " ")
}
