package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/zkrecipes/recipes"
)

// waiting is the set-up of a command that waits for a recipe and then runs
// a command. It keeps one signal channel for the whole run, so that no
// signal falls back to its default action (killing zkrecipes with the
// recipe held) at the hand-over: while connecting or waiting a signal
// cancels the waiting context; once the recipe is held, signals go to the
// command (see child.run).
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
// context bounds what the command does once connected.
func quickSession(g globals) (context.Context, *recipes.Session, func(), error) {
	g.giveUpRefused = !g.connectSet
	sess, err := connect(context.Background(), g)
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), sess.Timeout()+10*time.Second)
	return ctx, sess, func() { _ = sess.Close(); cancel() }, nil
}

// forwardedSignals are caught for the whole run: they end a wait, and are
// passed on to the command once it runs.
var forwardedSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// cancelOnSignal calls cancel when a signal arrives on sigs, until stop is
// called; stop reports whether a signal came first.
func cancelOnSignal(sigs <-chan os.Signal, cancel context.CancelFunc) (stop func() bool) {
	return cancelOn(sigs, cancel, func(os.Signal) bool { return true })
}

// cancelOn is cancelOnSignal for the signals that end reports true of; it
// swallows the others.
func cancelOn(sigs <-chan os.Signal, cancel context.CancelFunc, end func(os.Signal) bool) (stop func() bool) {
	quit := make(chan struct{})
	done := make(chan bool, 1)
	go func() {
		for {
			select {
			case s := <-sigs:
				if !end(s) {
					continue
				}
				cancel()
				done <- true
			case <-quit:
				done <- false
			}
			return
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

// connect opens the session, within the bound boundConnect set; when it
// passes, the error names the servers tried and for how long. It tells
// g.notes when ZooKeeper granted another session timeout than the one asked.
func connect(ctx context.Context, g globals) (*recipes.Session, error) {
	bound, why := g.connectTimeout, g.connectWhy
	if bound == 0 {
		bound = recipes.DefaultConnectTimeout
	}
	if why == "" {
		why = "the default --connect-timeout"
	}
	opts := append([]recipes.Option{recipes.WithSessionTimeout(g.sessionTimeout), recipes.WithConnectTimeout(bound)}, accessOptions(g)...)
	tlsOpts, err := tlsOptions(g)
	if err != nil {
		return nil, err
	}
	opts = append(opts, tlsOpts...)
	refused, giveUp := context.WithCancelCause(ctx)
	defer giveUp(nil)
	if g.giveUpRefused {
		r := &refusals{servers: len(g.servers), giveUp: giveUp}
		opts = append(opts, recipes.WithDialer(r.dial))
	}
	cctx, cancel := context.WithTimeoutCause(refused, bound, fmt.Errorf("no session within %v (%s)", bound, why))
	defer cancel()
	sess, err := recipes.Connect(cctx, g.servers, opts...)
	switch {
	case err == nil:
		if granted := sess.Timeout(); granted != g.sessionTimeout && g.notes != nil {
			fmt.Fprintf(g.notes, "zkrecipes: ZooKeeper granted a session timeout of %v, not the %v asked (its minSessionTimeout and maxSessionTimeout bound it)\n", granted, g.sessionTimeout)
		}
		return sess, nil
	case ctx.Err() != nil:
		return nil, exitError{exitInterrupted, errors.New("interrupted")}
	case errors.Is(err, recipes.ErrInvalid):
		return nil, usagef("%v", err)
	}
	return nil, fmt.Errorf("cannot reach ZooKeeper: %w", err) // which names the servers
}

// refusedBound is how long the commands that only look (inspect, leader,
// revoke) wait while every attempt to connect is refused: nothing listens
// there, and a person is waiting for the answer. It outlasts a ZooKeeper's
// restart on the same port, which refuses for a moment, and is well below
// the 15s they would wait otherwise. --connect-timeout, given, waits its
// whole bound: a script that waits for ZooKeeper to come up says so.
const refusedBound = 3 * time.Second

// refusals is a dialer for connect that gives up, through giveUp, once
// every attempt for refusedBound, and one at least to each server, has been
// refused. go-zookeeper tries the servers in turn, pausing a second after
// each round, so that is three rounds or so.
type refusals struct {
	servers int
	giveUp  context.CancelCauseFunc

	mu    sync.Mutex // guards since and count
	since time.Time  // when the attempts began to be refused
	count int        // the attempts refused since then, one after another
}

func (r *refusals) dial(network, address string, timeout time.Duration) (net.Conn, error) {
	conn, err := net.DialTimeout(network, address, timeout)
	r.mu.Lock()
	defer r.mu.Unlock()
	if !errors.Is(err, syscall.ECONNREFUSED) {
		r.count = 0
		return conn, err
	}
	if r.count == 0 {
		r.since = time.Now()
	}
	r.count++
	if r.count >= r.servers && time.Since(r.since) >= refusedBound {
		r.giveUp(fmt.Errorf("every connection refused for %v (with --connect-timeout D it waits D)", refusedBound))
	}
	return conn, err
}
