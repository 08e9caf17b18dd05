package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/zkrecipes/recipes/locks"
)

// revokeGrace is how long a command may take to exit after SIGTERM when its
// lock is revoked (and still held), before it gets SIGKILL.
const revokeGrace = 5 * time.Second

// lossGrace is the same when the lock is lost: half the margin by which the
// session's deadline comes before the server may hand the lock on (a tenth
// of the session timeout), so that the command is gone before anyone else
// can hold the lock.
func lossGrace(sessionTimeout time.Duration) time.Duration { return sessionTimeout / 20 }

// A child is the command that runs while a recipe is held.
type child struct {
	command, env   []string
	sessionTimeout time.Duration    // the session's: the loss grace is a twentieth of it
	sigs           <-chan os.Signal // signals to pass on to the command
	stderr         io.Writer
	what           string // what is held, for messages: "lock", "leadership"
}

// An ended says how a child ended.
type ended struct {
	code    int  // its exit status
	lost    bool // what was held was lost while it ran
	stopped bool // zkrecipes was asked to stop (SIGINT, SIGTERM, SIGQUIT) while it ran
}

// stopping reports whether s asks zkrecipes to stop, as SIGHUP, which is
// only passed on, does not.
func stopping(s os.Signal) bool { return s != syscall.SIGHUP }

// run runs the command while held lasts. It passes the signals that arrive
// on sigs on to the command; if what is held is lost (then SIGKILL follows
// SIGTERM after lossGrace), or revoked is closed (a revocation request the
// user asked to honour), it terminates the command.
//
// The command runs in a process group of its own, which every signal goes
// to, unless stdin is a terminal (childAttr); and it is killed if zkrecipes
// itself dies.
func (c child) run(held context.Context, revoked <-chan struct{}) ended {
	cmd := exec.Command(c.command[0], c.command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// The command gets zkrecipes' environment, but not its credentials.
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "ZKRECIPES_AUTH=")
	}), c.env...)
	attr, group := childAttr()
	cmd.SysProcAttr = attr
	// Pdeathsig follows the thread that started the command.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(c.stderr, "zkrecipes: %v\n", err)
		return ended{code: 127}
	}
	signal := func(s os.Signal) {
		if sig, ok := s.(syscall.Signal); ok && group {
			_ = syscall.Kill(-cmd.Process.Pid, sig)
			return
		}
		_ = cmd.Process.Signal(s)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	var e ended
	heldDone := held.Done()
	var kill <-chan time.Time
	for {
		select {
		case err := <-exited:
			if kill != nil && group {
				// Stopped for a loss or a revocation: whatever else of
				// its group is left goes now, not only after the grace.
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			}
			// A signal sent to the command too (from the terminal, or to
			// the whole group or cgroup) may have ended it before
			// zkrecipes read its own copy.
			for pending := true; pending; {
				select {
				case s := <-c.sigs:
					e.stopped = e.stopped || stopping(s)
				default:
					pending = false
				}
			}
			e.code = exitStatus(err)
			return e
		case s := <-c.sigs:
			e.stopped = e.stopped || stopping(s)
			signal(s)
		case <-heldDone:
			heldDone = nil
			if !errors.Is(context.Cause(held), locks.ErrLockLost) {
				continue
			}
			e.lost = true
			fmt.Fprintf(c.stderr, "zkrecipes: %s lost (%v); stopping the command\n", c.what, context.Cause(held))
			signal(syscall.SIGTERM)
			kill = time.After(lossGrace(c.sessionTimeout))
		case <-revoked:
			revoked = nil
			fmt.Fprintf(c.stderr, "zkrecipes: asked to release the %s; stopping the command\n", c.what)
			signal(syscall.SIGTERM)
			if kill == nil {
				kill = time.After(revokeGrace)
			}
		case <-kill:
			signal(syscall.SIGKILL)
		}
	}
}

// exitStatus maps how a command ended to a shell-style status.
func exitStatus(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return 1
}
