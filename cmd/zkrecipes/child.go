package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/zkrecipes/recipes/locks"
)

// killGrace is how long a command may take to exit after SIGTERM when its
// lock is lost, before it gets SIGKILL.
const killGrace = 5 * time.Second

// runHolding runs command while held lasts. It passes the signals that
// arrive on sigs on to the command; if the lock is lost, or revoked is
// closed (a revocation request the user asked to honour), it terminates the
// command. It returns the command's exit status and whether the lock was
// lost.
func runHolding(held context.Context, revoked <-chan struct{}, command, env []string, sigs <-chan os.Signal, stderr io.Writer) (code int, lost bool) {
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// The command gets zkrecipes' environment, but not its credentials.
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "ZKRECIPES_AUTH=")
	}), env...)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "zkrecipes: %v\n", err)
		return 127, false
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	heldDone := held.Done()
	var kill <-chan time.Time
	for {
		select {
		case err := <-exited:
			return exitStatus(err), lost
		case s := <-sigs:
			_ = cmd.Process.Signal(s)
		case <-heldDone:
			heldDone = nil
			if !errors.Is(context.Cause(held), locks.ErrLockLost) {
				continue
			}
			lost = true
			fmt.Fprintf(stderr, "zkrecipes: lock lost (%v); stopping the command\n", context.Cause(held))
			_ = cmd.Process.Signal(syscall.SIGTERM)
			kill = time.After(killGrace)
		case <-revoked:
			revoked = nil
			fmt.Fprintln(stderr, "zkrecipes: asked to release the lock; stopping the command")
			_ = cmd.Process.Signal(syscall.SIGTERM)
			kill = time.After(killGrace)
		case <-kill:
			_ = cmd.Process.Kill()
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
