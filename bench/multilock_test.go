package bench_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/zkrecipes/recipes/locks"
)

// multiMembers are the sizes BenchmarkMultiLock takes.
var multiMembers = []int{1, 2, 4, 8}

// BenchmarkMultiLock takes and releases a multi-lock of N free mutexes, N =
// 1, 2, 4 and 8, on one session, nobody else around: "multilock" is
// locks.MultiLock, which asks for every member at once; "one-by-one" takes
// the same mutexes one after another in path order and releases them last
// first, as MultiLock did before issue 30 (and Curator's
// InterProcessMultiLock does). Each reports reqs/op, rtts/op and watches/op
// as counted on the session's socket.
func BenchmarkMultiLock(b *testing.B) {
	for _, n := range multiMembers {
		runInTurn(b,
			sub{fmt.Sprintf("multilock/members=%d", n), func(b *testing.B) { benchMulti(b, n, false) }},
			sub{fmt.Sprintf("one-by-one/members=%d", n), func(b *testing.B) { benchMulti(b, n, true) }})
	}
}

func benchMulti(b *testing.B, n int, oneByOne bool) {
	_, root := newRoot(b)
	p := newProxy(b)
	sess := connect(b, p)
	var paths []string
	for i := range n {
		paths = append(paths, fmt.Sprintf("%s/m-%d", root, i))
	}
	ml, err := locks.NewMultiMutex(sess, paths)
	if err != nil {
		b.Fatal(err)
	}
	mutexes := make([]*locks.Mutex, n)
	for i, path := range paths {
		mutexes[i] = newMutex(b, sess, path)
	}
	ctx := context.Background()
	take := func() error {
		h, err := ml.Lock(ctx)
		if err != nil {
			return err
		}
		return h.Release(ctx)
	}
	if oneByOne {
		take = func() error {
			var held []*locks.Hold
			for _, m := range mutexes {
				h, err := m.Lock(ctx)
				if err != nil {
					return err
				}
				held = append(held, h)
			}
			for _, h := range slices.Backward(held) {
				if err := h.Release(ctx); err != nil {
					return err
				}
			}
			return nil
		}
	}
	if err := take(); err != nil { // the members' directories
		b.Fatal(err)
	}
	before := p.Traffic()
	for b.Loop() {
		if err := take(); err != nil {
			b.Fatal(err)
		}
	}
	reportTraffic(b, b.N, p.Traffic().Sub(before))
}
