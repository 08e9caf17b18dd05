package bench_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/barriers"
	"github.com/zkrecipes/recipes/internal/testenv/curatortest"
)

// barrierMembers is how many members, each on its own session, meet at the
// double barrier in BenchmarkDoubleBarrier.
const barrierMembers = 100

// BenchmarkDoubleBarrier has 100 members, each on its own session, meet at
// a double barrier: 99 enter and wait, then the last one arrives. An op is
// one round; it reports the time from the last arrival until every member
// is through Enter (last-in-ms), and the requests the last member sent to
// get in (last-reqs) and the round trips they took (last-rtts). Curator 5.4.0 runs the same rounds through the Java peer.
func BenchmarkDoubleBarrier(b *testing.B) {
	b.Run("barriers", func(b *testing.B) {
		admin, root := newRoot(b)
		path := root + "/double"
		// The last member has a proxy of its own, which counts what it
		// sends.
		others, last := newProxy(b), newProxy(b)
		sessions := make([]*recipes.Session, barrierMembers)
		for i := range sessions {
			p := others
			if i == barrierMembers-1 {
				p = last
			}
			sessions[i] = connect(b, p)
		}
		var total time.Duration
		var lastReqs, lastRTTs int64
		for range b.N {
			members := make([]*barriers.DoubleBarrier, barrierMembers)
			for i, s := range sessions {
				m, err := barriers.NewDoubleBarrier(s, path, barrierMembers)
				if err != nil {
					b.Fatal(err)
				}
				members[i] = m
			}
			var lastIn time.Time
			var mu sync.Mutex
			var entered, left sync.WaitGroup
			leave := make(chan struct{})
			enter := func(m *barriers.DoubleBarrier) {
				entered.Add(1)
				left.Go(func() {
					if err := m.Enter(context.Background()); err != nil {
						b.Error(err)
					}
					now := time.Now()
					mu.Lock()
					if now.After(lastIn) {
						lastIn = now
					}
					mu.Unlock()
					entered.Done()
					<-leave
					if err := m.Leave(context.Background()); err != nil {
						b.Error(err)
					}
				})
			}
			for _, m := range members[:barrierMembers-1] {
				enter(m)
			}
			for {
				names, _, err := admin.Children(path)
				if err == nil && len(names) >= barrierMembers-1 {
					break
				}
				time.Sleep(time.Millisecond) // poll for the 99 members' nodes
			}
			before := last.Traffic()
			start := time.Now()
			enter(members[barrierMembers-1])
			entered.Wait()
			total += lastIn.Sub(start)
			sent := last.Traffic().Sub(before)
			lastReqs, lastRTTs = lastReqs+sent.Requests, lastRTTs+sent.RoundTrips
			close(leave)
			left.Wait()
		}
		b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "last-in-ms")
		b.ReportMetric(float64(lastReqs)/float64(b.N), "last-reqs")
		b.ReportMetric(float64(lastRTTs)/float64(b.N), "last-rtts")
	})
	b.Run("curator", func(b *testing.B) {
		admin, root := newRoot(b)
		// Persistent: as a container it is reaped once empty between
		// rounds, and Curator's creatingParentContainersIfNeeded fails a
		// member with NoNode when that happens between its creating the
		// parents and its node (the harness reaps every 100 ms).
		ensurePersistent(b, admin, root)
		removeAtEnd(b, admin, root)
		peer := curatortest.EnsureT(b)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		out, err := peer.Run(ctx, "bench-double-barrier", newProxy(b).Addr(),
			root+"/double", strconv.Itoa(barrierMembers), strconv.Itoa(max(b.N, 3)))
		if err != nil {
			b.Fatal(err)
		}
		var seconds float64
		if _, err := fmt.Sscanf(out, "seconds=%f", &seconds); err != nil {
			b.Fatalf("Curator peer printed %q: %v", out, err)
		}
		b.ReportMetric(seconds*1000, "last-in-ms")
	})
}
