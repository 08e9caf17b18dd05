package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/locks"
)

// waiting is the set-up of a command that waits for a recipe and then runs
// a command. It keeps one signal channel for the whole run, so that no
// signal falls back to its default action (killing zkrecipes with the
// recipe held) at the hand-over: while connecting or waiting a signal
// cancels the waiting context; once the recipe is held, signals go to the
// command (see runHolding).
type waiting struct {
	sess   *recipes.Session
	sigs   chan os.Signal
	stop   func() bool // ends the waiting phase; reports whether a signal came first
	cancel context.CancelFunc
}

// startWaiting connects and returns the waiting context and set-up.
func startWaiting(g globals) (context.Context, *waiting, error) {
	w := &waiting{sigs: make(chan os.Signal, 4)}
	signal.Notify(w.sigs, forwardedSignals...)
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	w.stop = cancelOnSignal(w.sigs, cancel)
	sess, err := connect(ctx, g)
	if err != nil {
		w.stop()
		cancel()
		signal.Stop(w.sigs)
		return nil, nil, err
	}
	w.sess = sess
	return ctx, w, nil
}

func (w *waiting) close() {
	w.stop()
	w.cancel()
	_ = w.sess.Close()
	signal.Stop(w.sigs)
}

// quickSession connects for a command that only reads or writes once; the
// context bounds the whole command.
func quickSession(g globals) (context.Context, *recipes.Session, func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), g.sessionTimeout+10*time.Second)
	sess, err := connect(ctx, g)
	if err != nil {
		cancel()
		return nil, nil, nil, err
	}
	return ctx, sess, func() { _ = sess.Close(); cancel() }, nil
}

// forwardedSignals are caught for the whole run: they end a wait, and are
// passed on to the command once it runs.
var forwardedSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// cancelOnSignal calls cancel when a signal arrives on sigs, until stop is
// called; stop reports whether a signal came first.
func cancelOnSignal(sigs <-chan os.Signal, cancel context.CancelFunc) (stop func() bool) {
	quit := make(chan struct{})
	done := make(chan bool, 1)
	go func() {
		select {
		case <-sigs:
			cancel()
			done <- true
		case <-quit:
			done <- false
		}
	}()
	var once sync.Once
	var signalled bool
	return func() bool {
		once.Do(func() {
			close(quit)
			signalled = <-done
		})
		return signalled
	}
}

// statusEvery is how often a waiting command repeats who holds the lock.
const statusEvery = 5 * time.Second

// holdCommand runs a command while holding a recipe: lock, rlock, wlock,
// semaphore, semaphore-mutex, multilock.
func holdCommand(g globals, name string, args []string, stderr io.Writer) error {
	own, command, err := splitCommand(name, args)
	if err != nil {
		return err
	}
	fs := newFlagSet(name, &g)
	timeout := fs.Duration("timeout", 0, "")
	data := fs.String("data", "", "")
	// Only the locks Curator makes revocable take --revocable; elsewhere it
	// would be accepted and do nothing.
	revocable := new(bool)
	if name == "lock" || name == "rlock" || name == "wlock" {
		fs.BoolVar(revocable, "revocable", false, "")
	}
	leases := 0
	if name == "semaphore" {
		fs.IntVar(&leases, "leases", 0, "")
	}
	pos, err := parseInterspersed(fs, own)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("%s: want exactly one PATH, got %d", name, len(pos))
	}
	if *timeout < 0 {
		return usagef("%s: --timeout must not be negative", name)
	}
	if name == "semaphore" && leases < 1 {
		return usagef("semaphore: --leases N (at least 1) is required")
	}
	if len(*data) > locks.MaxDataSize {
		return usagef("%s: --data is %d bytes, more than %d", name, len(*data), locks.MaxDataSize)
	}
	// Check before connecting: bad input creates nothing, and is a usage
	// error even when ZooKeeper is down.
	paths := []string{pos[0]}
	if name == "multilock" {
		paths = strings.Split(pos[0], ",")
	}
	for _, p := range paths {
		if err := recipes.ValidatePath(p); err != nil {
			return usagef("%s: %v", name, err)
		}
	}
	var opts []locks.Option
	if *data != "" {
		opts = append(opts, locks.WithData([]byte(*data)))
	}

	g.connectTimeout = *timeout
	ctx, w, err := startWaiting(g)
	if err != nil {
		return err
	}
	defer w.close()
	sess, sigs, stop := w.sess, w.sigs, w.stop
	ops, err := buildOps(name, sess, paths, leases, opts)
	if err != nil {
		return usagef("%s: %v", name, err)
	}
	h, err := acquire(ctx, ops, *timeout, stderr)
	if err != nil {
		return err
	}
	if stop() {
		_ = h.Release(context.Background())
		return exitError{exitInterrupted, fmt.Errorf("interrupted while waiting for %s", ops.path)}
	}
	token := h.Token()
	fmt.Fprintf(stderr, "zkrecipes: acquired %s (fencing token %d)\n", ops.path, token)
	env := []string{
		"ZKRECIPES_LOCK_PATH=" + ops.path,
		"ZKRECIPES_FENCING_TOKEN=" + strconv.FormatInt(token, 10),
		"ZKRECIPES_FENCING_TOKENS=" + fencingTokens(h),
	}
	var revoked <-chan struct{}
	if *revocable && ops.revocable {
		revoked = h.Revoked()
	}
	code, lost := runHolding(h.Context(), revoked, command, env, sigs, stderr)
	unlockErr := h.Release(context.Background())
	switch {
	case lost:
		return exitError{exitLost, fmt.Errorf("lost %s while the command ran: %v", ops.path, h.Err())}
	case unlockErr != nil:
		fmt.Fprintf(stderr, "zkrecipes: unlock %s: %v\n", ops.path, unlockErr)
	}
	return exitError{code: code}
}

func connect(ctx context.Context, g globals) (*recipes.Session, error) {
	opts := []recipes.Option{recipes.WithSessionTimeout(g.sessionTimeout)}
	if g.connectTimeout > 0 {
		opts = append(opts, recipes.WithConnectTimeout(g.connectTimeout))
	}
	sess, err := recipes.Connect(ctx, g.servers, opts...)
	switch {
	case err == nil:
		return sess, nil
	case ctx.Err() != nil:
		return nil, exitError{exitInterrupted, errors.New("interrupted")}
	case errors.Is(err, recipes.ErrInvalid):
		return nil, usagef("%v", err)
	}
	return nil, fmt.Errorf("cannot reach ZooKeeper at %v: %w", g.servers, err)
}

// acquire takes the lock within timeout (0: no limit), telling stderr who
// holds it while it waits.
func acquire(ctx context.Context, ops lockOps, timeout time.Duration, stderr io.Writer) (*locks.Hold, error) {
	if ops.try != nil {
		h, ok, err := ops.try(ctx)
		if err != nil {
			return nil, lockFailure(ctx, ops, err)
		}
		if ok {
			return h, nil
		}
	}
	wctx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		wctx, cancel = context.WithTimeoutCause(ctx, timeout, errTimedOut)
	}
	defer cancel()
	type result struct {
		h   *locks.Hold
		err error
	}
	done := make(chan result, 1)
	go func() {
		h, err := ops.lock(wctx)
		done <- result{h, err}
	}()
	start := time.Now()
	report := func() {
		fmt.Fprintf(stderr, "zkrecipes: waiting for %s (%.1fs)%s\n", ops.path, time.Since(start).Seconds(), ops.status(ctx))
	}
	report()
	tick := time.NewTicker(statusEvery)
	defer tick.Stop()
	for {
		select {
		case r := <-done:
			if r.err != nil {
				return nil, lockFailure(wctx, ops, r.err)
			}
			return r.h, nil
		case <-tick.C:
			report()
		}
	}
}

var errTimedOut = errors.New("timed out")

func lockFailure(ctx context.Context, ops lockOps, err error) error {
	switch {
	case errors.Is(context.Cause(ctx), errTimedOut):
		return exitError{exitTimeout, fmt.Errorf("timed out waiting for %s", ops.path)}
	case ctx.Err() != nil:
		return exitError{exitInterrupted, fmt.Errorf("interrupted while waiting for %s", ops.path)}
	case errors.Is(err, locks.ErrMaxLeases), errors.Is(err, locks.ErrOtherRecipe):
		return usagef("%v", err)
	}
	return err
}
