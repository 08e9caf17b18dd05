package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zkrecipes/recipes/zktest"
)

// binary is the zkrecipes command, built once for these tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zkrecipes-cli-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "zkrecipes")
	if out, err := exec.Command("go", "build", "-race", "-o", binary, ".").CombinedOutput(); err != nil {
		panic(fmt.Sprintf("build zkrecipes: %v\n%s", err, out))
	}
	code := 0
	func() {
		defer os.RemoveAll(dir)
		goleak.VerifyTestMain(exitCode{zktest.WithServer(m), &code})
	}()
	os.Exit(code)
}

// exitCode lets TestMain clean up after goleak.VerifyTestMain's Run.
type exitCode struct {
	m    goleak.TestingM
	code *int
}

func (e exitCode) Run() int { *e.code = e.m.Run(); return *e.code }

// zkrecipes runs the command with the test servers and returns its exit
// status, stdout and stderr.
func zkrecipes(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := command(t, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("run zkrecipes: %v", err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

func command(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	full := append([]string{"--servers", strings.Join(zktest.Servers(t), ","), "--session-timeout", "4s"}, args...)
	return exec.Command(binary, full...)
}

// stop ends a `zkrecipes lock` the way a user would, with SIGTERM, which it
// passes on to its command before releasing the lock.
func stop(p *exec.Cmd) {
	_ = p.Process.Signal(syscall.SIGTERM)
	_ = p.Wait()
}

func lockNodes(t *testing.T, admin *zk.Conn, path string) []string {
	t.Helper()
	names, _, err := admin.Children(path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	require.NoError(t, err)
	return names
}

func waitNodes(t *testing.T, admin *zk.Conn, path string, n int) {
	t.Helper()
	eventually(t, func() bool { return len(lockNodes(t, admin, path)) == n })
}

// eventually polls cond, an observable state, until it holds.
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestLockRunsCommandsOneAtATime(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/lock"
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	// Each run appends "start" and "end" with a pause between: under the
	// lock the lines must alternate.
	script := `echo "start $$" >> "$1"; sleep 0.1; echo "end $$" >> "$1"`
	var wg sync.WaitGroup
	codes := make([]int, 4)
	for i := range codes {
		wg.Go(func() {
			codes[i], _, _ = zkrecipes(t, "lock", path, "--", "sh", "-c", script, "sh", log)
		})
	}
	wg.Wait()
	assert.Equal(t, []int{0, 0, 0, 0}, codes)
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Len(t, lines, 8)
	for i := 0; i < len(lines); i += 2 {
		start, end := strings.TrimPrefix(lines[i], "start "), strings.TrimPrefix(lines[i+1], "end ")
		assert.Equal(t, start, end, "runs overlapped: %q", lines)
	}
	assert.Empty(t, lockNodes(t, admin, path))
}

func TestLockPassesStatusAndEnvironment(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/lock"
	code, stdout, stderr := zkrecipes(t, "lock", path, "--", "sh", "-c",
		`echo "$ZKRECIPES_LOCK_PATH $ZKRECIPES_FENCING_TOKEN"; exit 7`)
	assert.Equal(t, 7, code, stderr)
	fields := strings.Fields(stdout)
	require.Len(t, fields, 2, stdout)
	assert.Equal(t, path, fields[0])
	assert.NotEqual(t, "0", fields[1], "fencing token")
	assert.Contains(t, stderr, "acquired "+path)
}

func TestLockTimeoutExits75AndLeavesNoNode(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/lock"
	holder := command(t, "lock", path, "--data", "the-holder", "--", "sleep", "30")
	require.NoError(t, holder.Start())
	defer stop(holder)
	waitNodes(t, admin, path, 1)

	// --timeout bounds connecting too unless --connect-timeout is given: on
	// a loaded machine, connecting alone can take longer than 300ms.
	code, _, stderr := zkrecipes(t, "lock", path, "--timeout", "300ms", "--connect-timeout", "30s", "--session-timeout", "5s", "--", "true")
	assert.Equal(t, 75, code, stderr)
	assert.Contains(t, stderr, "held by the-holder")
	assert.Contains(t, stderr, "timed out waiting for "+path)
	assert.Len(t, lockNodes(t, admin, path), 1, "the timed-out waiter left its node")
}

// TestLockLostStopsCommandAndExits79: a lock or a leadership lost (its node
// deleted) stops the command, and zkrecipes exits 79.
func TestLockLostStopsCommandAndExits79(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	for name, told := range map[string]string{"lock": "lock lost", "elect": "leadership lost"} {
		path := root + "/" + name
		holder := command(t, name, path, "--", "sh", "-c", "echo held; exec sleep 30")
		var stderr bytes.Buffer
		holder.Stderr = &stderr
		stdout, err := holder.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, holder.Start())
		// The command runs once the lock is held, so the node is the
		// holder's for good: one deleted before (by a delete that
		// overtook the listing sent behind its create) is queued again.
		line, err := bufio.NewReader(stdout).ReadString('\n')
		require.NoError(t, err, name)
		require.Equal(t, "held\n", line, name)
		require.NoError(t, admin.Delete(path+"/"+lockNodes(t, admin, path)[0], -1))

		err = holder.Wait()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee)
		assert.Equal(t, 79, ee.ExitCode(), "%s: %s", name, stderr.String())
		assert.Contains(t, stderr.String(), told)
	}
}

func TestInspectJSON(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/lock"
	var procs []*exec.Cmd
	for i, data := range []string{"first", "second", "third"} {
		p := command(t, "lock", path, "--data", data, "--", "sleep", "30")
		require.NoError(t, p.Start())
		procs = append(procs, p)
		waitNodes(t, admin, path, i+1)
	}
	defer func() {
		for _, p := range procs {
			stop(p)
		}
	}()

	code, stdout, stderr := zkrecipes(t, "inspect", "--json", path)
	require.Equal(t, 0, code, stderr)
	var got struct {
		Path   string
		Holder struct {
			Data  string
			Token int64 `json:"fencing_token"`
		}
		Waiters []struct{ Data string }
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &got), stdout)
	assert.Equal(t, path, got.Path)
	assert.Equal(t, "first", got.Holder.Data)
	assert.NotZero(t, got.Holder.Token)
	require.Len(t, got.Waiters, 2)
	assert.Equal(t, "second", got.Waiters[0].Data)
	assert.Equal(t, "third", got.Waiters[1].Data)

	code, stdout, _ = zkrecipes(t, "inspect", path)
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "held by first")
}

func TestBadUsageExits64AndCreatesNothing(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	for _, args := range [][]string{
		{"lock", root + "/lock", "true"},        // missing --
		{"lock", root + "/lock", "--"},          // nothing after --
		{"lock", "relative/lock", "--", "true"}, // relative path
		{"lock", root + "/lock/", "--", "true"}, // trailing slash
		{"lock", root + "/lock", "--timeout", "-1s", "--", "true"},
		{"lock", "--bogus", root + "/lock", "--", "true"},
		{"inspect"},
		{"frobnicate"},
		{},
	} {
		code, _, stderr := zkrecipes(t, args...)
		assert.Equal(t, 64, code, "%q: %s", args, stderr)
		assert.Regexp(t, `Run 'zkrecipes (\S+ )?--help' for usage`, stderr, "%q", args)
	}
	ok, _, err := admin.Exists(root)
	require.NoError(t, err)
	assert.False(t, ok, "bad usage created %s", root)

	code, stdout, _ := zkrecipes(t, "--help")
	assert.Equal(t, 0, code)
	for _, want := range []string{"lock PATH", "inspect PATH", "75", "79"} {
		assert.Contains(t, stdout, want)
	}
}

// TestUnreachableZooKeeper: with nothing listening, a command gives up within
// its --timeout and says why; a malformed server address is a usage error.
func TestUnreachableZooKeeper(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := ln.Addr().String()
	require.NoError(t, ln.Close())

	start := time.Now()
	code, _, stderr := zkrecipes(t, "lock", "/unreachable", "--servers", closed, "--timeout", "2s", "--", "true")
	assert.Equal(t, 69, code, stderr)
	assert.Contains(t, stderr, "connection refused")
	// Before, the wait was the session timeout plus 5 s whatever --timeout said.
	assert.Less(t, time.Since(start), 8*time.Second, "--timeout did not bound connecting")

	code, _, stderr = zkrecipes(t, "lock", "/unreachable", "--servers", "127.0.0.1:notaport", "--", "true")
	assert.Equal(t, 64, code, stderr)
	assert.Contains(t, stderr, "notaport")
}
