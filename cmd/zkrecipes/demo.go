package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The demo's nodes.
const (
	demoRoot    = "/zkrecipes-demo"
	demoBarrier = demoRoot + "/batch"
	demoCatalog = demoRoot + "/catalog"
	demoAccount = demoRoot + "/accounts/"
)

// demoJobCommand is the hidden command each demo worker runs inside the
// double barrier.
const demoJobCommand = "demo-job"

// demoCommands are demo and the hidden command its workers run.
func demoCommands() []command {
	return []command{
		{
			name: "demo",
			summary: `  demo [--workers N] [--transfers N]
        a batch job's story: worker processes meet at a double barrier,
        share a read/write lock, move money under multi-locks, and leave
        together; needs a running ZooKeeper (from a checkout, 'make demo'
        starts one and runs this)
`,
			usage: `usage: zkrecipes demo [--workers N] [--transfers N]

A batch job's story, printed as one timeline: N worker processes (default
3) meet at a double barrier, share a read/write lock, move money between
two accounts under multi-locks N times each (--transfers, default 2), and
leave together. It needs a running ZooKeeper (--servers); from a checkout,
'make demo' starts one and runs this.
`,
			run: demoCommand,
		},
		{name: demoJobCommand, hidden: true, run: func(g globals, _ string, args []string, stdout, _ io.Writer) error {
			return demoJob(g, args, stdout)
		}},
	}
}

// demoCommand tells a batch job's story: worker processes meet at a double
// barrier, read a shared catalog under a read/write lock (one of them
// updates it, alone), move money between two accounts under multi-locks taken
// in opposite orders (no deadlock), and leave together. It prints one
// timeline.
//
// It connects to the servers it is given (or the default) and never starts
// one: an installed tool must not install system packages. With no
// ZooKeeper there, it says how to get one.
func demoCommand(g globals, _ string, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("demo", &g)
	workers := fs.Int("workers", 3, "")
	transfers := fs.Int("transfers", 2, "")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 || *workers < 2 || *transfers < 1 {
		return usagef("demo: takes --workers N (at least 2) and --transfers N (at least 1) only")
	}
	if err := demoReachable(g); err != nil {
		return err
	}
	servers := g.servers
	dir, err := os.MkdirTemp("", "zkrecipes-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	state := demoState{dir}
	if err := state.init(); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}

	fmt.Fprintf(stdout, `
A batch job of %d worker processes, each started as
  zkrecipes double-barrier %s --members %d -- <the worker's job>
Inside, each worker reads the catalog under a read lock (worker-1 updates it
under the write lock), then moves money between accounts a and b %d times
under a multi-lock on both (odd workers name them a,b, even ones b,a).

`, *workers, demoBarrier, *workers, *transfers)
	tl := &timeline{out: stdout, start: time.Now()}
	// A signal (Ctrl-C reaches the workers too, from the terminal) is
	// passed on to every worker, and the demo waits for them all before it
	// removes its files and exits 130: nothing is left running or behind.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, forwardedSignals...)
	defer signal.Stop(sigs)
	var interrupted bool
	var started []*exec.Cmd
	forward := func(sig os.Signal) {
		interrupted = true
		for _, c := range started {
			_ = c.Process.Signal(sig) // one that has exited says so; no matter
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, *workers)
	for w := 1; w <= *workers && !interrupted; w++ {
		name := fmt.Sprintf("worker-%d", w)
		cmd := exec.Command(exe, "--servers", strings.Join(servers, ","),
			"double-barrier", demoBarrier, "--members", strconv.Itoa(*workers), "--data", name, "--",
			exe, "--servers", strings.Join(servers, ","), demoJobCommand, dir, name, strconv.Itoa(*transfers))
		wait, err := tl.launch(name, cmd)
		if err != nil {
			errs[w-1] = fmt.Errorf("%s: %w", name, err)
			break
		}
		started = append(started, cmd)
		wg.Go(func() {
			if err := wait(); err != nil {
				errs[w-1] = fmt.Errorf("%s: %w", name, err)
			}
		})
		if w < *workers {
			// Let the first ones wait a moment for the last, to show it.
			select {
			case sig := <-sigs:
				forward(sig)
			case <-time.After(400 * time.Millisecond):
			}
		}
	}
	finished := make(chan struct{})
	go func() {
		wg.Wait()
		close(finished)
	}()
	for done := false; !done; {
		select {
		case sig := <-sigs:
			forward(sig)
		case <-finished:
			done = true
		}
	}
	if interrupted {
		return exitError{exitInterrupted, errors.New("demo: interrupted; every worker has stopped")}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return state.report(stdout, *workers, *transfers)
}

// demoConnectTimeout bounds the demo's first look for ZooKeeper, unless the
// command line gave a connect timeout.
const demoConnectTimeout = 5 * time.Second

// demoReachable checks that ZooKeeper answers before any worker starts, and
// otherwise tells the user how to get one.
func demoReachable(g globals) error {
	if g.connectTimeout == 0 {
		g.connectTimeout, g.connectWhy = demoConnectTimeout, "the demo's default --connect-timeout"
	}
	sess, err := connect(context.Background(), g)
	if err != nil {
		return fmt.Errorf("%w\n%s", err, demoNoServerHint)
	}
	return sess.Close()
}

const demoNoServerHint = `The demo needs a ZooKeeper server: name one with --servers or ZK_SERVERS,
or start one on this machine (on Debian: apt-get install zookeeperd). From a
checkout of zkrecipes, 'make demo' starts a throwaway server and runs the demo
against it.`

// timeline prints the lines of several processes, stamped and labelled.
type timeline struct {
	out   io.Writer
	start time.Time
	mu    sync.Mutex // serialises lines
}

func (tl *timeline) print(who, line string) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	fmt.Fprintf(tl.out, "%6.2fs  %-9s %s\n", time.Since(tl.start).Seconds(), who, line)
}

// launch starts cmd with its output on the timeline, labelled who, and
// returns what waits for it to end and its output to be printed.
func (tl *timeline) launch(who string, cmd *exec.Cmd) (wait func() error, err error) {
	r, w := io.Pipe()
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		w.Close()
		r.Close()
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			tl.print(who, strings.TrimPrefix(sc.Text(), "zkrecipes: "))
		}
	}()
	return func() error {
		err := cmd.Wait()
		w.Close()
		<-done
		return err
	}, nil
}

// demoState is the shared data the workers guard with their locks: files,
// each holding one number.
type demoState struct{ dir string }

func (s demoState) file(name string) string { return s.dir + "/" + name }

func (s demoState) init() error {
	for name, v := range map[string]int{"catalog": 1, "a": 100, "b": 100} {
		if err := s.write(name, v); err != nil {
			return err
		}
	}
	return nil
}

func (s demoState) read(name string) (int, error) {
	b, err := os.ReadFile(s.file(name))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

func (s demoState) write(name string, v int) error {
	return os.WriteFile(s.file(name), []byte(strconv.Itoa(v)), 0o644)
}

// report checks that the locks did their job: the catalog was updated once,
// and the money in the two accounts is all there.
func (s demoState) report(w io.Writer, workers, transfers int) error {
	catalog, err := s.read("catalog")
	if err != nil {
		return err
	}
	a, err := s.read("a")
	if err != nil {
		return err
	}
	b, err := s.read("b")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nCatalog at v%d (one update); accounts a=%d b=%d, total %d after %d transfers",
		catalog, a, b, a+b, workers*transfers)
	if catalog != 2 || a+b != 200 {
		fmt.Fprintln(w, ": something was lost!")
		return exitError{code: 1}
	}
	fmt.Fprintln(w, ": nothing lost, no deadlock, everyone left together.")
	return nil
}

// demoJob is one worker's share of the batch, run inside the double barrier.
func demoJob(g globals, args []string, stdout io.Writer) error {
	if len(args) != 3 {
		return usagef("%s: want DIR NAME TRANSFERS", demoJobCommand)
	}
	state, name := demoState{args[0]}, args[1]
	transfers, err := strconv.Atoi(args[2])
	if err != nil {
		return usagef("%s: %v", demoJobCommand, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sess, err := connect(ctx, g)
	if err != nil {
		return err
	}
	defer sess.Close()
	say := func(format string, a ...any) { fmt.Fprintf(stdout, format+"\n", a...) }
	return runDemoJob(ctx, sess, state, name, transfers, say)
}
