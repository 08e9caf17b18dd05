package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/locks"
)

// holdCommands are the commands that run CMD while holding a recipe.
func holdCommands() []command {
	lockSummary := `  lock PATH -- CMD [ARG...]
        run CMD while holding the mutex at PATH (Curator InterProcessMutex)
  rlock PATH -- CMD, wlock PATH -- CMD
        ... the read or the write half of the read/write lock at PATH
  semaphore PATH --leases N -- CMD
        ... one of the N leases of the semaphore at PATH
  semaphore-mutex PATH -- CMD
        ... the semaphore mutex at PATH (Curator InterProcessSemaphoreMutex)
  multilock PATH,PATH... -- CMD
        ... the mutexes at all the PATHs, waited for in path order
`
	holding := `
While CMD runs its environment has ZKRECIPES_LOCK_PATH, ZKRECIPES_FENCING_TOKEN
and ZKRECIPES_FENCING_TOKENS (PATH=TOKEN, comma-separated); a multilock's has
no ZKRECIPES_FENCING_TOKEN, as no one token fences every path: fence each
path's store with its own token. Signals are passed on to CMD. If the lock
is lost, CMD gets SIGTERM, SIGKILL a twentieth of the session timeout
later, and zkrecipes exits 79. Unless stdin is a terminal, CMD runs in a
process group of its own and the signals go to the whole group. If
zkrecipes is killed, so is CMD.
`
	revocable := `  --revocable   stop CMD (SIGTERM) when someone revokes the lock (see revoke)
`
	mk := func(name, synopsis, what, flags string) command {
		wait, timedOut, conflict := waitFlagsUsage, rowTimeout, rowConflict
		switch name {
		case "multilock":
			wait, timedOut = waitOnlyFlagsUsage, "  75  timed out waiting\n" // it cannot try once
		case "semaphore":
			conflict = rowLeases
		}
		exits := cmdExitHead + rowUsage + conflict + rowUnavailable + timedOut + rowNoPerm + rowLost + rowCannotRun + rowInterrupted
		return command{
			name:    name,
			summary: lockSummary,
			usage:   "usage: zkrecipes " + name + " " + synopsis + "\n\n" + what + "\n\n" + wait + flags + holding + exits,
			run:     holdCommand,
		}
	}
	return []command{
		mk("lock", "PATH [flags] -- CMD [ARG...]", "Run CMD while holding the mutex at PATH (Curator's InterProcessMutex).", revocable),
		mk("rlock", "PATH [flags] -- CMD [ARG...]", "Run CMD while holding the read half of the read/write lock at PATH\n(Curator's InterProcessReadWriteLock): readers share it.", revocable),
		mk("wlock", "PATH [flags] -- CMD [ARG...]", "Run CMD while holding the write half of the read/write lock at PATH\n(Curator's InterProcessReadWriteLock): a writer is alone.", revocable),
		mk("semaphore", "PATH --leases N|--count-path P [flags] -- CMD...", "Run CMD while holding one of the N leases of the semaphore at PATH\n(Curator's InterProcessSemaphoreV2). Every user must give the same N: the\nfirst records it, and another N exits 65 while a lease is held or\nwaited for. With --count-path P, the number of leases is the shared\ncount at P (Curator's SharedCount: a 4-byte big-endian integer),\nread as the command reaches the front of the queue.",
			"  --leases N          the number of leases (1 to 2147483647)\n  --count-path P      the number of leases is the shared count at P\n"),
		mk("semaphore-mutex", "PATH [flags] -- CMD [ARG...]", "Run CMD while holding the semaphore mutex at PATH (Curator's\nInterProcessSemaphoreMutex: a semaphore of one lease).", ""),
		mk("multilock", "PATH,PATH... [flags] -- CMD [ARG...]", "Run CMD while holding the mutexes at all the PATHs: asked for at once,\nwaited for in path order.\nIt cannot try once: -n and --timeout 0 are usage errors.", ""),
	}
}

// statusEvery is how often a waiting command repeats who holds the lock.
const statusEvery = 5 * time.Second

// holdCommand runs a command while holding a recipe: lock, rlock, wlock,
// semaphore, semaphore-mutex, multilock.
func holdCommand(g globals, name string, args []string, _, stderr io.Writer) error {
	own, command, err := splitCommand(name, args)
	if err != nil {
		return err
	}
	fs := newFlagSet(name, &g)
	wf := addWaitFlags(fs, "data")
	// Only the locks Curator makes revocable take --revocable; elsewhere it
	// would be accepted and do nothing.
	revocable := new(bool)
	if name == "lock" || name == "rlock" || name == "wlock" {
		fs.BoolVar(revocable, "revocable", false, "")
	}
	leases, countPath := 0, ""
	if name == "semaphore" {
		fs.IntVar(&leases, "leases", 0, "")
		fs.StringVar(&countPath, "count-path", "", "")
	}
	pos, err := parseInterspersed(fs, own)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("%s: want exactly one PATH, got %d", name, len(pos))
	}
	once, err := wf.tryOnce(name)
	if err != nil {
		return err
	}
	if once && name == "multilock" {
		return usagef("multilock: cannot try once (-n, --timeout 0); give --timeout D")
	}
	switch {
	case name != "semaphore":
	case flagSet(fs, "leases") && flagSet(fs, "count-path"):
		return usagef("semaphore: give --leases N or --count-path P, not both")
	case flagSet(fs, "count-path"):
		if err := recipes.ValidatePath(countPath); err != nil {
			return usagef("semaphore: --count-path: %v", err)
		}
	case !flagSet(fs, "leases"):
		return usagef("semaphore: --leases N (at least 1) is required, or --count-path P")
	case leases < 1:
		return usagef("semaphore: --leases %d: must be at least 1", leases)
	case leases > math.MaxInt32:
		return usagef("semaphore: --leases %d: must be at most %d (Curator's limit, a Java int)", leases, math.MaxInt32)
	}
	if len(wf.data) > recipes.MaxDataSize {
		return usagef("%s: --data is %d bytes, more than %d", name, len(wf.data), recipes.MaxDataSize)
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
	if err := findCommand(name, command); err != nil {
		return err
	}
	var opts []recipes.NodeOption
	if wf.data != "" {
		opts = append(opts, recipes.WithData([]byte(wf.data)))
	}
	return holding{
		name: name, wf: wf, once: once, command: command, what: "lock", acquired: "acquired",
		build: func(sess *recipes.Session) (lockOps, error) {
			ops, err := buildOps(name, sess, paths, semaphoreSize{leases, countPath}, opts)
			ops.revocable = ops.revocable && *revocable
			return ops, err
		},
		env: func(path string, h *locks.Hold) []string {
			env := []string{"ZKRECIPES_LOCK_PATH=" + path, "ZKRECIPES_FENCING_TOKENS=" + fencingTokens(h)}
			if h.Members() == nil { // a multi-lock's Token is no fence
				env = append(env, "ZKRECIPES_FENCING_TOKEN="+strconv.FormatInt(h.Token(), 10))
			}
			return env
		},
	}.run(g, stderr)
}

// holding is a run-while-holding command whose command line is checked:
// it connects, waits for the recipe, runs the command while it holds it,
// and releases it.
type holding struct {
	name     string
	wf       *waitFlags
	once     bool     // try once (-n, --timeout 0)
	command  []string // the command to run
	what     string   // what is held, for messages: "lock", "leadership"
	acquired string   // the status line's verb once held
	// build makes the recipe in the session; its ops are revocable only
	// if the user asked for that (--revocable).
	build func(sess *recipes.Session) (lockOps, error)
	// env is the command's environment, besides zkrecipes' own: path is
	// what is held, as messages show it (a multilock's paths).
	env func(path string, h *locks.Hold) []string
}

func (c holding) run(g globals, stderr io.Writer) error {
	wf := c.wf
	g.boundConnect(wf.timeout, c.once)
	ctx, w, err := startWaiting(g)
	if err != nil {
		return err
	}
	defer w.close()
	sess, sigs, stop := w.sess, w.sigs, w.stop
	ops, err := c.build(sess)
	if err != nil {
		return usagef("%s: %v", c.name, err)
	}
	var h *locks.Hold
	if c.once {
		h, err = tryAcquire(ctx, ops)
	} else {
		h, err = acquire(ctx, ops, wf.timeout, wf.status(stderr))
	}
	if err != nil {
		return err
	}
	if stop() {
		_ = h.Release(context.Background())
		return exitError{exitInterrupted, fmt.Errorf("interrupted while waiting for %s", ops.path)}
	}
	fmt.Fprintf(wf.status(stderr), "zkrecipes: %s %s (%s)\n", c.acquired, ops.path, tokenLabel(h))
	var revoked <-chan struct{}
	if ops.revocable {
		revoked = h.Revoked()
	}
	run := child{command: c.command, env: c.env(ops.path, h), sessionTimeout: sess.Timeout(), sigs: sigs, stderr: stderr, what: c.what}
	e := run.run(h.Context(), revoked)
	unlockErr := h.Release(context.Background())
	switch {
	case e.lost:
		return exitError{exitLost, fmt.Errorf("lost %s while the command ran: %v", ops.path, h.Err())}
	case unlockErr != nil:
		fmt.Fprintf(stderr, "zkrecipes: release %s: %v\n", ops.path, unlockErr)
	}
	return exitError{code: e.code}
}

// tryAcquire takes the lock if it is free now (-n).
func tryAcquire(ctx context.Context, ops lockOps) (*locks.Hold, error) {
	h, ok, err := ops.try(ctx)
	switch {
	case err != nil:
		return nil, waitFailure(ctx, ops.path, err)
	case !ok:
		return nil, busy(ops.path)
	}
	return h, nil
}

// acquire takes the lock within timeout (0: no limit). It queues once, with
// one node, and says on stderr who holds the lock when, and only when, it
// waits: once the library says the acquisition queued, then every
// statusEvery. Quiet (stderr discards), it reads nothing to say so.
func acquire(ctx context.Context, ops lockOps, timeout time.Duration, stderr io.Writer) (*locks.Hold, error) {
	wctx, cancel := withTimeout(ctx, timeout)
	defer cancel()
	var say func()
	if stderr != io.Discard {
		start := time.Now()
		say = func() {
			fmt.Fprintf(stderr, "zkrecipes: waiting for %s (%s)%s\n", ops.path, shortAge(time.Since(start)), ops.status(wctx))
		}
	}
	h, err := waitSaying(wctx, ops.lock, statusEvery, say)
	if err != nil {
		return nil, waitFailure(wctx, ops.path, err)
	}
	return h, nil
}
