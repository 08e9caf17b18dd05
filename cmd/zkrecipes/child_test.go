package main_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/zktest"
)

// readPid waits for a command to write its pid, and a newline, into file.
func readPid(t *testing.T, file string) int {
	t.Helper()
	var pid int
	eventually(t, func() bool {
		b, err := os.ReadFile(file)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}

// running reports whether pid is a live process (not gone, nor a zombie
// that nobody has reaped yet).
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

// TestLostLockStopsAllTheCommandStarted: a lost lock stops the command's
// whole process group, not only its first process, so no work it started
// goes on once another holder can get the lock.
func TestLostLockStopsAllTheCommandStarted(t *testing.T) {
	t.Parallel()
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/lock"
	pidfile := filepath.Join(t.TempDir(), "pid")
	// The child ignores SIGTERM, and the shell stops at it.
	holder := command(t, "lock", path, "--", "sh", "-c", `(trap '' TERM; exec sleep 300) & echo $! > "$1"; wait`, "sh", pidfile)
	require.NoError(t, holder.Start())
	work := readPid(t, pidfile)
	waitNodes(t, admin, path, 1)
	require.NoError(t, admin.Delete(path+"/"+lockNodes(t, admin, path)[0], -1))
	var ee *exec.ExitError
	require.True(t, errors.As(holder.Wait(), &ee))
	assert.Equal(t, 79, ee.ExitCode())
	eventually(t, func() bool { return !running(work) })
}

// TestKilledZkrecipesTakesItsCommandAlong: zkrecipes killed outright (kill
// -9, the OOM killer) cannot release its lock, which goes when its session
// expires; its command must not run on until then, and after.
func TestKilledZkrecipesTakesItsCommandAlong(t *testing.T) {
	t.Parallel()
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/lock"
	pidfile := filepath.Join(t.TempDir(), "pid")
	holder := command(t, "lock", path, "--", "sh", "-c", `echo $$ > "$1"; exec sleep 300`, "sh", pidfile)
	require.NoError(t, holder.Start())
	cmd := readPid(t, pidfile)
	waitNodes(t, admin, path, 1)
	require.NoError(t, holder.Process.Kill())
	_ = holder.Wait()
	eventually(t, func() bool { return !running(cmd) })
	waitNodes(t, admin, path, 0) // the session expires
}

// TestLostLockKillsBeforeTheNextHolder: a command that ignores SIGTERM gets
// SIGKILL soon enough after a loss (half the margin the session's deadline
// leaves) that it is gone before the server lets another client hold the
// lock.
func TestLostLockKillsBeforeTheNextHolder(t *testing.T) {
	t.Parallel()
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/lock"
	p := testenv.ProxyT(t)
	pidfile := filepath.Join(t.TempDir(), "pid")
	holder := exec.Command(binary, "--servers", p.Addr(), "--session-timeout", "4s", "lock", path, "--",
		"sh", "-c", `trap '' TERM; echo $$ > "$1"; while :; do sleep 0.05; done`, "sh", pidfile)
	require.NoError(t, holder.Start())
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	cmd := readPid(t, pidfile)
	waitNodes(t, admin, path, 1)
	p.Stall() // the server hears nothing more from the holder
	code, _, stderr := zkrecipes(t, "lock", "--timeout", "30s", path, "--", "true")
	require.Equal(t, 0, code, stderr)
	assert.False(t, running(cmd), "the old holder's command ran on when another client got the lock")
	p.Restore()
}
