package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/locks"
)

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

func lockCommand(g globals, args []string, stderr io.Writer) error {
	own, command, err := splitCommand("lock", args)
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("lock", flag.ContinueOnError)
	timeout := fs.Duration("timeout", 0, "")
	data := fs.String("data", "", "")
	pos, err := parseInterspersed(fs, own)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("lock: want exactly one PATH, got %d", len(pos))
	}
	if *timeout < 0 {
		return usagef("lock: --timeout must not be negative")
	}
	var opts []locks.Option
	if *data != "" {
		opts = append(opts, locks.WithData([]byte(*data)))
	}
	// Check before connecting: bad input creates nothing, and is a usage
	// error even when ZooKeeper is down.
	if err := recipes.ValidatePath(pos[0]); err != nil {
		return usagef("lock: %v", err)
	}
	if len(*data) > locks.MaxDataSize {
		return usagef("lock: --data is %d bytes, more than %d", len(*data), locks.MaxDataSize)
	}

	// One signal channel for the whole run, so that no signal falls back to
	// its default action (killing us with the lock held) at the hand-over:
	// while connecting or waiting a signal gives up; once the lock is held,
	// signals go to the command (see runHolding).
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, forwardedSignals...)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := cancelOnSignal(sigs, cancel)
	defer stop()
	sess, err := connect(ctx, g)
	if err != nil {
		return err
	}
	defer sess.Close()
	m, err := locks.NewMutex(sess, pos[0], opts...)
	if err != nil {
		return usagef("lock: %v", err)
	}
	held, err := acquire(ctx, m, *timeout, stderr)
	if err != nil {
		return err
	}
	if stop() {
		_ = m.Unlock(held)
		return exitError{exitInterrupted, fmt.Errorf("interrupted while waiting for %s", pos[0])}
	}
	token, _ := m.Token(held)
	node := ""
	if ps, err := m.Participants(held); err == nil && len(ps) > 0 {
		node = ps[0].Path
	}
	fmt.Fprintf(stderr, "zkrecipes: acquired %s (fencing token %d)\n", pos[0], token)
	env := []string{
		"ZKRECIPES_LOCK_PATH=" + pos[0],
		"ZKRECIPES_LOCK_NODE=" + node,
		"ZKRECIPES_FENCING_TOKEN=" + strconv.FormatInt(token, 10),
	}
	code, lost := runHolding(held, command, env, sigs, stderr)
	unlockErr := m.Unlock(held)
	switch {
	case lost:
		return exitError{exitLost, fmt.Errorf("lost %s while the command ran: %v", pos[0], context.Cause(held))}
	case unlockErr != nil:
		fmt.Fprintf(stderr, "zkrecipes: unlock %s: %v\n", pos[0], unlockErr)
	}
	return exitError{code: code}
}

func connect(ctx context.Context, g globals) (*recipes.Session, error) {
	cctx, cancel := context.WithTimeout(ctx, g.sessionTimeout+5*time.Second)
	defer cancel()
	sess, err := recipes.Connect(cctx, g.servers, recipes.WithSessionTimeout(g.sessionTimeout))
	if err != nil {
		if ctx.Err() != nil {
			return nil, exitError{exitInterrupted, errors.New("interrupted")}
		}
		return nil, fmt.Errorf("cannot reach ZooKeeper at %v: %w", g.servers, err)
	}
	return sess, nil
}

// acquire takes the lock within timeout (0: no limit), telling stderr who
// holds it while it waits.
func acquire(ctx context.Context, m *locks.Mutex, timeout time.Duration, stderr io.Writer) (context.Context, error) {
	held, ok, err := m.TryLock(ctx)
	if err != nil {
		return nil, lockFailure(ctx, m, err)
	}
	if ok {
		return held, nil
	}
	wctx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		wctx, cancel = context.WithTimeoutCause(ctx, timeout, errTimedOut)
	}
	defer cancel()
	type result struct {
		held context.Context
		err  error
	}
	done := make(chan result, 1)
	go func() {
		h, err := m.Lock(wctx)
		done <- result{h, err}
	}()
	start := time.Now()
	reportWaiting(ctx, m, start, stderr)
	tick := time.NewTicker(statusEvery)
	defer tick.Stop()
	for {
		select {
		case r := <-done:
			if r.err != nil {
				return nil, lockFailure(wctx, m, r.err)
			}
			return r.held, nil
		case <-tick.C:
			reportWaiting(ctx, m, start, stderr)
		}
	}
}

var errTimedOut = errors.New("timed out")

func lockFailure(ctx context.Context, m *locks.Mutex, err error) error {
	switch {
	case errors.Is(context.Cause(ctx), errTimedOut):
		return exitError{exitTimeout, fmt.Errorf("timed out waiting for %s", m.Path())}
	case ctx.Err() != nil:
		return exitError{exitInterrupted, fmt.Errorf("interrupted while waiting for %s", m.Path())}
	}
	return err
}

func reportWaiting(ctx context.Context, m *locks.Mutex, start time.Time, stderr io.Writer) {
	ps, err := m.Participants(ctx)
	if err != nil || len(ps) == 0 {
		fmt.Fprintf(stderr, "zkrecipes: waiting for %s (%.1fs)\n", m.Path(), time.Since(start).Seconds())
		return
	}
	h := ps[0]
	fmt.Fprintf(stderr, "zkrecipes: waiting for %s, held by %s (queued %.1fs ago), %d in line\n",
		m.Path(), dataLabel(h.Data), time.Since(h.Created).Seconds(), len(ps)-1)
}

// dataLabel shows node data as text when it is short and printable.
func dataLabel(data []byte) string {
	if len(data) == 0 {
		return "(no data)"
	}
	if len(data) > 80 {
		return fmt.Sprintf("(%d bytes)", len(data))
	}
	for _, b := range data {
		if b < 0x20 || b > 0x7e {
			return fmt.Sprintf("%q", data)
		}
	}
	return string(data)
}
