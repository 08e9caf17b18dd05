package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/coverage"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/locks"
)

// idleDir is the idle window's directory under the probe's; window i's is
// "w" followed by i.
const idleDir = "idle"

// runProbe takes the measurement (see the package doc) against the
// ZooKeeper that ZK_SERVERS names, writing each window's counters to a
// directory of its own under dir.
func runProbe(dir string, windows int) (err error) {
	servers := os.Getenv("ZK_SERVERS")
	if servers == "" {
		return errors.New("-probe needs ZK_SERVERS")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sess, err := recipes.Connect(ctx, strings.Split(servers, ","))
	if err != nil {
		return err
	}
	defer sess.Close()
	path := fmt.Sprintf("/enginepath-%d-%d", os.Getpid(), time.Now().UnixNano())
	m, err := locks.NewMutex(sess, path)
	if err != nil {
		return err
	}
	defer func() {
		// The lock's node is gone with each Release; its parent is ours.
		if derr := sess.Delete(ctx, path); err == nil && derr != nil && !errors.Is(derr, zk.ErrNoNode) {
			err = derr
		}
	}()
	lockOnce := func() error {
		h, err := m.Lock(ctx)
		if err != nil {
			return err
		}
		return h.Release(ctx)
	}
	for range 3 {
		if err := lockOnce(); err != nil {
			return err
		}
	}
	if err := quiet(ctx); err != nil {
		return err
	}
	for i := 1; i <= windows; i++ {
		if err := window(ctx, filepath.Join(dir, "w"+strconv.Itoa(i)), lockOnce); err != nil {
			return err
		}
	}
	long := sess.Timeout() / 2 // a keep-alive every tenth of it
	idle := func() error {
		select {
		case <-time.After(long):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return window(ctx, filepath.Join(dir, idleDir), idle)
}

// window clears the counters, runs f, waits until what f started has
// finished, and writes the counters to dir.
func window(ctx context.Context, dir string, f func() error) error {
	if err := coverage.ClearCounters(); err != nil {
		return fmt.Errorf("%w (build with -cover -covermode=atomic)", err)
	}
	if err := f(); err != nil {
		return err
	}
	if err := quiet(ctx); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := coverage.WriteMetaDir(dir); err != nil {
		return err
	}
	return coverage.WriteCountersDir(dir)
}

// quiet waits until no goroutine but the caller's runs, or was started by,
// code of a package below the module's root: the session's own goroutines
// (go-zookeeper's, the keep-alive) run only the root's code and
// go-zookeeper's, while whatever a Lock or Release starts (a watch, a read
// after a write) is code of locks or the internal packages.
func quiet(ctx context.Context) error {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n == len(buf) {
			buf = make([]byte, 2*len(buf))
			continue
		}
		// The caller's goroutine comes first, the others after it, one
		// paragraph each.
		_, others, _ := strings.Cut(string(buf[:n]), "\n\n")
		busy := ""
		for g := range strings.SplitSeq(others, "\n\n") {
			if strings.Contains(g, "\n"+module+"/") || strings.Contains(g, "created by "+module+"/") {
				busy = g
			}
		}
		if busy == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("a goroutine of the lock still runs: %w\n%s", ctx.Err(), busy)
		case <-time.After(time.Millisecond):
		}
	}
}
