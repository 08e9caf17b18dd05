package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"time"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/barriers"
	"github.com/zkrecipes/recipes/locks"
)

// barrierCommand is `barrier set|remove|wait PATH`.
func barrierCommand(g globals, args []string, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("barrier: want set, remove or wait")
	}
	action := args[0]
	if action != "set" && action != "remove" && action != "wait" {
		return usagef("barrier: unknown action %q (want set, remove or wait)", action)
	}
	fs := newFlagSet("barrier "+action, &g)
	timeout := fs.Duration("timeout", 0, "")
	data := fs.String("data", "", "")
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("barrier %s: want exactly one PATH, got %d", action, len(pos))
	}
	if err := checkCommon(pos[0], *timeout, *data); err != nil {
		return usagef("barrier %s: %v", action, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), forwardedSignals...)
	defer stop()
	g.connectTimeout = *timeout
	sess, err := connect(ctx, g)
	if err != nil {
		return err
	}
	defer sess.Close()
	b, err := barriers.NewBarrier(sess, pos[0], dataOption(*data)...)
	if err != nil {
		return usagef("barrier %s: %v", action, err)
	}
	ctx, cancel := withTimeout(ctx, *timeout)
	defer cancel()
	switch action {
	case "set":
		err = b.Set(ctx)
	case "remove":
		err = b.Remove(ctx)
	default:
		fmt.Fprintf(stderr, "zkrecipes: waiting at barrier %s\n", pos[0])
		err = b.Wait(ctx)
	}
	if err != nil {
		return waitFailure(ctx, "barrier "+pos[0], err)
	}
	return nil
}

// doubleBarrierCommand is `double-barrier PATH --members N -- CMD`: enter,
// run CMD, leave.
func doubleBarrierCommand(g globals, args []string, stderr io.Writer) error {
	own, command, err := splitCommand("double-barrier", args)
	if err != nil {
		return err
	}
	fs := newFlagSet("double-barrier", &g)
	timeout := fs.Duration("timeout", 0, "")
	data := fs.String("data", "", "")
	members := fs.Int("members", 0, "")
	pos, err := parseInterspersed(fs, own)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("double-barrier: want exactly one PATH, got %d", len(pos))
	}
	if *members < 1 {
		return usagef("double-barrier: --members N (at least 1) is required")
	}
	if err := checkCommon(pos[0], *timeout, *data); err != nil {
		return usagef("double-barrier: %v", err)
	}
	g.connectTimeout = *timeout
	ctx, w, err := startWaiting(g)
	if err != nil {
		return err
	}
	defer w.close()
	b, err := barriers.NewDoubleBarrier(w.sess, pos[0], *members, dataOption(*data)...)
	if err != nil {
		return usagef("double-barrier: %v", err)
	}
	if err := enterShowingProgress(ctx, b, *timeout, stderr); err != nil {
		return err
	}
	if w.stop() {
		_ = b.Leave(context.Background())
		return exitError{exitInterrupted, fmt.Errorf("interrupted while waiting at %s", pos[0])}
	}
	fmt.Fprintf(stderr, "zkrecipes: entered %s\n", pos[0])
	code, _ := runHolding(context.Background(), nil, command, []string{"ZKRECIPES_BARRIER_PATH=" + pos[0]}, w.sigs, stderr)

	lctx, cancel := withTimeout(context.Background(), *timeout)
	defer cancel()
	if err := b.Leave(lctx); err != nil {
		return waitFailure(lctx, "the others to leave "+pos[0], err)
	}
	fmt.Fprintf(stderr, "zkrecipes: left %s\n", pos[0])
	return exitError{code: code}
}

// enterShowingProgress enters b within timeout, telling stderr how many
// members have arrived while it waits.
func enterShowingProgress(ctx context.Context, b *barriers.DoubleBarrier, timeout time.Duration, stderr io.Writer) error {
	ctx, cancel := withTimeout(ctx, timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- b.Enter(ctx) }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last := -1
	report := func() {
		if n, open, err := b.Arrived(ctx); err == nil && !open && n != last {
			fmt.Fprintf(stderr, "zkrecipes: waiting at %s: %d/%d arrived\n", b.Path(), n, b.Members())
			last = n
		}
	}
	for first := time.After(100 * time.Millisecond); ; {
		select {
		case err := <-done:
			if err != nil {
				return waitFailure(ctx, "the others at "+b.Path(), err)
			}
			return nil
		case <-first:
			report()
		case <-tick.C:
			report()
		}
	}
}

// revokeCommand is `revoke PATH [NODE]`: ask the holders of the lock at
// PATH, or the one NODE, to let go. It exits 1 when there is nothing to
// revoke: nobody holds, or a node is gone or is not a lock node.
func revokeCommand(g globals, args []string, stdout io.Writer) error {
	fs := newFlagSet("revoke", &g)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return usagef("revoke: want PATH and at most one NODE")
	}
	if err := recipes.ValidatePath(pos[0]); err != nil {
		return usagef("revoke: %v", err)
	}
	ctx, sess, done, err := quickSession(g)
	if err != nil {
		return err
	}
	defer done()
	var nodes []string
	if len(pos) == 2 {
		nodes = []string{pos[1]}
	} else {
		in, err := describe(ctx, sess, pos[0])
		if err != nil {
			return err
		}
		for _, h := range in.Holders {
			nodes = append(nodes, h.Node)
		}
		if len(nodes) == 0 {
			return exitError{exitNothing, fmt.Errorf("nobody holds %s", pos[0])}
		}
	}
	var refused []error
	for _, n := range nodes {
		full := n
		if n != "" && n[0] != '/' {
			full = pos[0] + "/" + n
		}
		err := locks.Revoke(ctx, sess, full)
		switch {
		case errors.Is(err, locks.ErrNotRevocable):
			refused = append(refused, err)
			continue
		case err != nil:
			return err
		}
		fmt.Fprintf(stdout, "asked %s to let go\n", full)
	}
	if len(refused) > 0 {
		return exitError{exitNothing, errors.Join(refused...)}
	}
	return nil
}

// checkCommon checks the arguments every waiting command shares.
func checkCommon(path string, timeout time.Duration, data string) error {
	if err := recipes.ValidatePath(path); err != nil {
		return err
	}
	if timeout < 0 {
		return errors.New("--timeout must not be negative")
	}
	if len(data) > barriers.MaxDataSize {
		return fmt.Errorf("--data is %d bytes, more than %d", len(data), barriers.MaxDataSize)
	}
	return nil
}

func dataOption(data string) []barriers.Option {
	if data == "" {
		return nil
	}
	return []barriers.Option{barriers.WithData([]byte(data))}
}

// withTimeout bounds ctx by timeout, if it is not 0, with errTimedOut as the
// cause.
func withTimeout(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, timeout, errTimedOut)
}

// waitFailure maps a failed wait to an exit status: 75 on --timeout, 130 on
// a signal, 64 for a path another recipe uses, 69 otherwise (ZooKeeper
// failing, or the session lost).
func waitFailure(ctx context.Context, what string, err error) error {
	switch {
	case errors.Is(err, barriers.ErrOtherRecipe):
		return usagef("%v", err)
	case errors.Is(context.Cause(ctx), errTimedOut):
		return exitError{exitTimeout, fmt.Errorf("timed out waiting for %s", what)}
	case ctx.Err() != nil:
		return exitError{exitInterrupted, fmt.Errorf("interrupted while waiting for %s", what)}
	}
	return exitError{exitUnavailable, err}
}
