package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/locks"
)

// The pauses that stand for work in the demo, so that the timeline shows
// who waits for whom.
const (
	demoReadTime     = 300 * time.Millisecond
	demoWriteTime    = 400 * time.Millisecond
	demoTransferTime = 150 * time.Millisecond
)

// runDemoJob is one demo worker's share of the batch: read the catalog
// (worker-1 updates it), then move money between the accounts.
func runDemoJob(ctx context.Context, sess *recipes.Session, state demoState, name string, transfers int, say func(string, ...any)) error {
	me := recipes.WithData([]byte(name))
	rw, err := locks.NewRWMutex(sess, demoCatalog, me)
	if err != nil {
		return err
	}
	read := func(what string) error {
		r, err := rw.RLock(ctx)
		if err != nil {
			return err
		}
		v, err := state.read("catalog")
		if err != nil {
			return err
		}
		in, _ := describe(ctx, sess, demoCatalog)
		say("%s the catalog (v%d) under the read lock, shared by %d reader(s)", what, v, len(in.Holders))
		time.Sleep(demoReadTime)
		return r.Release(ctx)
	}
	if err := read("reads"); err != nil {
		return err
	}
	if name == "worker-1" {
		if in, err := describe(ctx, sess, demoCatalog); err == nil && len(in.Holders) > 0 {
			say("asks for the write lock; %d reader(s) still hold the catalog", len(in.Holders))
		}
		w, err := rw.Lock(ctx)
		if err != nil {
			return err
		}
		v, err := state.read("catalog")
		if err != nil {
			return err
		}
		say("has the write lock, alone: updates the catalog v%d -> v%d", v, v+1)
		time.Sleep(demoWriteTime)
		if err := state.write("catalog", v+1); err != nil {
			return err
		}
		if err := w.Release(ctx); err != nil {
			return err
		}
	} else if err := read("reads again"); err != nil {
		return err
	}

	// Odd workers name the accounts a,b and even ones b,a: a MultiLock takes
	// waits for them in path order either way, so nobody deadlocks.
	order := []string{"a", "b"}
	if n, _ := strconv.Atoi(strings.TrimPrefix(name, "worker-")); n%2 == 0 {
		order = []string{"b", "a"}
	}
	ml, err := locks.NewMultiMutex(sess, []string{demoAccount + order[0], demoAccount + order[1]}, me)
	if err != nil {
		return err
	}
	for i := range transfers {
		h, err := ml.Lock(ctx)
		if err != nil {
			return err
		}
		from, to := order[i%2], order[(i+1)%2]
		f, err := state.read(from)
		if err != nil {
			return err
		}
		t, err := state.read(to)
		if err != nil {
			return err
		}
		say("holds accounts a and b (asked for %s): moves 10 from %s to %s", strings.Join(order, ","), from, to)
		time.Sleep(demoTransferTime)
		if err := state.write(from, f-10); err != nil {
			return err
		}
		if err := state.write(to, t+10); err != nil {
			return err
		}
		if err := h.Release(ctx); err != nil {
			return fmt.Errorf("release accounts: %w", err)
		}
	}
	say("done; leaving the barrier")
	return nil
}
