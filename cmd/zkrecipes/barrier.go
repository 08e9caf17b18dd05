package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os/signal"
	"time"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/barriers"
)

// barrierCommands are barrier and double-barrier.
func barrierCommands() []command {
	return []command{
		{
			name: "double-barrier",
			summary: `  double-barrier PATH --members N -- CMD
        enter the double barrier at PATH (waiting for N members), run CMD,
        then leave it together with the others
`,
			usage: `usage: zkrecipes double-barrier PATH --members N [flags] -- CMD [ARG...]

Enter the double barrier at PATH (Curator's DistributedDoubleBarrier): wait
until N members have entered, run CMD (with ZKRECIPES_BARRIER_PATH in its
environment), then wait until every member has left. --timeout bounds
entering and leaving, each. It cannot try once: -n and --timeout 0 are usage
errors. Every member must give the same N: a member that finds one with
another N at the barrier exits 65.

  --members N   the member count that opens the barrier (required; 1 to
                2147483647)
` + waitOnlyFlagsUsage + cmdExitHead + rowUsage + rowMembers + rowUnavailable +
				"  75  timed out entering or leaving\n" + rowNoPerm + rowCannotRun + rowInterrupted,
			run: doubleBarrierCommand,
		},
		{
			name: "barrier",
			summary: `  barrier set|remove|wait PATH
        put up, take down, or wait for the removal of the barrier at PATH
`,
			usage: `usage: zkrecipes barrier set|remove|wait PATH [flags]

Put up (set), take down (remove), or wait for the removal of (wait) the
barrier at PATH (Curator's DistributedBarrier). wait with -n (or --timeout
0) checks once: 0 if the barrier is down, 75 if it is up. set and remove
wait for nobody: --timeout bounds connecting and the request. --data is the
data of the barrier's node, for set only.

` + waitFlagsUsage + barrierExitUsage,
			run: barrierCommand,
		},
	}
}

// barrierCommand is `barrier set|remove|wait PATH`.
func barrierCommand(g globals, _ string, args []string, _, stderr io.Writer) error {
	if isHelp(args) {
		return flag.ErrHelp
	}
	if len(args) == 0 {
		return usagef("barrier: want set, remove or wait")
	}
	action := args[0]
	if action != "set" && action != "remove" && action != "wait" {
		return usagef("barrier: unknown action %q (want set, remove or wait)", action)
	}
	fs := newFlagSet("barrier "+action, &g)
	wf := addWaitFlags(fs, "data")
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("barrier %s: want exactly one PATH, got %d", action, len(pos))
	}
	once, err := wf.tryOnce("barrier " + action)
	if err != nil {
		return err
	}
	if err := checkCommon(pos[0], wf.data); err != nil {
		return usagef("barrier %s: %v", action, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), forwardedSignals...)
	defer stop()
	g.boundConnect(wf.timeout, once)
	sess, err := connect(ctx, g)
	if err != nil {
		return err
	}
	defer sess.Close()
	b, err := barriers.NewBarrier(sess, pos[0], dataOption(wf.data)...)
	if err != nil {
		return usagef("barrier %s: %v", action, err)
	}
	ctx, cancel := withTimeout(ctx, wf.timeout)
	defer cancel()
	switch {
	case action == "set":
		err = b.Set(ctx)
	case action == "remove":
		err = b.Remove(ctx)
	case once:
		var up bool
		if up, err = b.IsSet(ctx); err == nil && up {
			return exitError{exitTimeout, fmt.Errorf("barrier %s is up (checked once)", pos[0])}
		}
	default:
		fmt.Fprintf(wf.status(stderr), "zkrecipes: waiting at barrier %s\n", pos[0])
		err = b.Wait(ctx)
	}
	if err != nil {
		return waitFailure(ctx, "barrier "+pos[0], err)
	}
	return nil
}

// doubleBarrierCommand is `double-barrier PATH --members N -- CMD`: enter,
// run CMD, leave.
func doubleBarrierCommand(g globals, _ string, args []string, _, stderr io.Writer) error {
	own, command, err := splitCommand("double-barrier", args)
	if err != nil {
		return err
	}
	fs := newFlagSet("double-barrier", &g)
	wf := addWaitFlags(fs, "data")
	members := fs.Int("members", 0, "")
	pos, err := parseInterspersed(fs, own)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("double-barrier: want exactly one PATH, got %d", len(pos))
	}
	if *members < 1 {
		if !flagSet(fs, "members") {
			return usagef("double-barrier: --members N (at least 1) is required")
		}
		return usagef("double-barrier: --members %d: must be at least 1", *members)
	}
	if *members > math.MaxInt32 {
		return usagef("double-barrier: --members %d: must be at most %d (Curator's limit, a Java int)", *members, math.MaxInt32)
	}
	if once, err := wf.tryOnce("double-barrier"); err != nil || once {
		return cmp.Or(err, usagef("double-barrier: cannot try once (-n, --timeout 0); give --timeout D"))
	}
	if err := checkCommon(pos[0], wf.data); err != nil {
		return usagef("double-barrier: %v", err)
	}
	if err := findCommand("double-barrier", command); err != nil {
		return err
	}
	g.boundConnect(wf.timeout, false)
	ctx, w, err := startWaiting(g)
	if err != nil {
		return err
	}
	defer w.close()
	b, err := barriers.NewDoubleBarrier(w.sess, pos[0], *members, dataOption(wf.data)...)
	if err != nil {
		return usagef("double-barrier: %v", err)
	}
	status := wf.status(stderr)
	if err := enterShowingProgress(ctx, b, wf.timeout, status); err != nil {
		return err
	}
	if w.stop() {
		_ = b.Leave(context.Background())
		return exitError{exitInterrupted, fmt.Errorf("interrupted while waiting at %s", pos[0])}
	}
	fmt.Fprintf(status, "zkrecipes: entered %s\n", pos[0])
	c := child{command: command, env: []string{"ZKRECIPES_BARRIER_PATH=" + pos[0]}, sessionTimeout: w.sess.Timeout(), sigs: w.sigs, stderr: stderr, what: "barrier"}
	code := c.run(context.Background(), nil).code

	lctx, cancel := withTimeout(context.Background(), wf.timeout)
	defer cancel()
	if err := b.Leave(lctx); err != nil {
		return waitFailure(lctx, "the others to leave "+pos[0], err)
	}
	fmt.Fprintf(status, "zkrecipes: left %s\n", pos[0])
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

// checkCommon checks the arguments every barrier command shares.
func checkCommon(path string, data string) error {
	if err := recipes.ValidatePath(path); err != nil {
		return err
	}
	if len(data) > recipes.MaxDataSize {
		return fmt.Errorf("--data is %d bytes, more than %d", len(data), recipes.MaxDataSize)
	}
	return nil
}

func dataOption(data string) []recipes.NodeOption {
	if data == "" {
		return nil
	}
	return []recipes.NodeOption{recipes.WithData([]byte(data))}
}
