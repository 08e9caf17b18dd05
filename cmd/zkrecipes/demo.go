package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zkrecipes/recipes/internal/zkserver"
	"github.com/zkrecipes/recipes/locks"
)

// demoLockPath is where the demo's workers contend.
const demoLockPath = "/zkrecipes-demo/counter"

// demoJobCommand is the hidden command each demo worker runs under the lock.
const demoJobCommand = "demo-job"

// demoCommand starts a ZooKeeper server when none was given, then runs
// several workers that each invoke `zkrecipes lock` a few times to increment
// a counter file under the lock, and prints their interleaved timeline.
func demoCommand(g globals, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	workers := fs.Int("workers", 3, "")
	rounds := fs.Int("rounds", 3, "")
	hold := fs.Duration("hold", 300*time.Millisecond, "")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 || *workers < 1 || *rounds < 1 || *hold < 0 {
		return usagef("demo: takes --workers N (≥1), --rounds N (≥1) and --hold D only")
	}
	servers := g.servers
	if !g.serversGiven {
		fmt.Fprintln(stdout, "Starting a local ZooKeeper (Debian's zookeeper package; installing it if missing)...")
		srv, err := zkserver.Start()
		if err != nil {
			return fmt.Errorf("start ZooKeeper: %w", err)
		}
		defer srv.Close()
		servers = srv.Servers()
		fmt.Fprintf(stdout, "ZooKeeper is up at %s.\n", strings.Join(servers, ","))
	}
	dir, err := os.MkdirTemp("", "zkrecipes-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	counter := filepath.Join(dir, "counter")
	if err := os.WriteFile(counter, []byte("0"), 0o644); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}

	fmt.Fprintf(stdout, "\n%d workers each run `zkrecipes lock %s -- <increment the counter>` %d times.\n"+
		"Only the holder touches the counter; the others wait in line and say who holds it.\n\n",
		*workers, demoLockPath, *rounds)
	tl := &timeline{out: stdout, start: time.Now()}
	var wg sync.WaitGroup
	errs := make([]error, *workers)
	for w := 1; w <= *workers; w++ {
		name := fmt.Sprintf("worker-%d", w)
		wg.Go(func() {
			for range *rounds {
				cmd := exec.Command(exe, "--servers", strings.Join(servers, ","), "lock", demoLockPath,
					"--data", name, "--", exe, demoJobCommand, counter, name, hold.String())
				if err := tl.run(name, cmd); err != nil {
					errs[w-1] = fmt.Errorf("%s: %w", name, err)
					return
				}
			}
		})
	}
	showQueue(g, servers, tl)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	b, err := os.ReadFile(counter)
	if err != nil {
		return err
	}
	want := *workers * *rounds
	fmt.Fprintf(stdout, "\nCounter is %s after %d locked increments", strings.TrimSpace(string(b)), want)
	if strings.TrimSpace(string(b)) != strconv.Itoa(want) {
		fmt.Fprintln(stdout, ": updates were lost!")
		return exitError{code: 1}
	}
	fmt.Fprintln(stdout, ": none lost, no two holders overlapped.")
	return nil
}

// showQueue prints `zkrecipes inspect` once while workers are queued.
func showQueue(g globals, servers []string, tl *timeline) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	g.servers = servers
	sess, err := connect(ctx, g)
	if err != nil {
		return
	}
	defer sess.Close()
	m, err := locks.NewMutex(sess, demoLockPath)
	if err != nil {
		return
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if ps, err := m.Participants(ctx); err == nil && len(ps) >= 2 {
			var b strings.Builder
			_ = inspectCommand(g, []string{demoLockPath}, &b)
			tl.print("inspect", "$ zkrecipes inspect "+demoLockPath)
			for line := range strings.SplitSeq(strings.TrimRight(b.String(), "\n"), "\n") {
				tl.print("inspect", line)
			}
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

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

func (tl *timeline) run(who string, cmd *exec.Cmd) error {
	r, w := io.Pipe()
	cmd.Stdout, cmd.Stderr = w, w
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			tl.print(who, strings.TrimPrefix(sc.Text(), "zkrecipes: "))
		}
	}()
	err := cmd.Run()
	w.Close()
	<-done
	return err
}

// demoJob is what a demo worker runs under the lock: read the counter, work
// a little, write it back plus one.
func demoJob(args []string, stdout io.Writer) error {
	if len(args) != 3 {
		return usagef("%s: want FILE NAME HOLD", demoJobCommand)
	}
	hold, err := time.ParseDuration(args[2])
	if err != nil {
		return usagef("%s: %v", demoJobCommand, err)
	}
	b, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "holds the lock (fencing token %s): counter %d -> %d\n", os.Getenv("ZKRECIPES_FENCING_TOKEN"), n, n+1)
	time.Sleep(hold) // the "work" done under the lock
	return os.WriteFile(args[0], []byte(strconv.Itoa(n+1)), 0o644)
}
