package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes/zktest"
)

// TestDoubleBarrierStartsCommandsTogether: three invocations; no command
// starts before the third member arrives, and all finish.
func TestDoubleBarrierStartsCommandsTogether(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/batch"
	log := filepath.Join(t.TempDir(), "log")
	args := []string{"double-barrier", path, "--members", "3", "--", "sh", "-c", `echo "start $$" >> "$1"`, "sh", log}

	var wg sync.WaitGroup
	codes, stderrs := make([]int, 3), make([]string, 3)
	for i := range 2 {
		wg.Go(func() { codes[i], _, stderrs[i] = zkrecipes(t, args...) })
	}
	eventually(t, func() bool { return len(lockNodes(t, admin, path)) == 2 })
	_, err := os.Stat(log)
	assert.ErrorIs(t, err, os.ErrNotExist, "a command started with 2 of 3 members")

	code, stdout, _ := zkrecipes(t, "inspect", "--json", path)
	require.Equal(t, 0, code)
	var in struct {
		Type    string
		Members []struct{ Kind string }
		Open    bool
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &in), stdout)
	assert.Equal(t, "double-barrier", in.Type)
	assert.Len(t, in.Members, 2)
	assert.False(t, in.Open)

	codes[2], _, stderrs[2] = zkrecipes(t, args...)
	wg.Wait()
	assert.Equal(t, []int{0, 0, 0}, codes, "%q", stderrs)
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Len(t, strings.Split(strings.TrimSpace(string(b)), "\n"), 3)
	assert.Contains(t, stderrs[0]+stderrs[1], "arrived", "no progress line while waiting")
	assert.Empty(t, lockNodes(t, admin, path), "members or ready left behind")
}

func TestDoubleBarrierTimeoutExits75AndLeavesNoNode(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/batch"
	code, _, stderr := zkrecipes(t, "double-barrier", path, "--members", "2", "--timeout", "300ms", "--connect-timeout", "30s", "--", "true")
	assert.Equal(t, 75, code, stderr)
	assert.Empty(t, lockNodes(t, admin, path))
}

// TestDoubleBarrierMembersMismatchExits65: a member for 3 where a member
// for 2 waits is refused (it would wait forever), and leaves no node.
func TestDoubleBarrierMembersMismatchExits65(t *testing.T) {
	t.Parallel()
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/batch"
	first := command(t, "double-barrier", path, "--members", "2", "--", "true")
	require.NoError(t, first.Start())
	defer stop(first)
	waitNodes(t, admin, path, 1)
	code, _, stderr := zkrecipes(t, "double-barrier", path, "--members", "3", "-q", "--timeout", "30s", "--", "true")
	assert.Equal(t, 65, code, stderr)
	// The operation and path, then the sentinel: "barriers" once.
	assert.Equal(t, "zkrecipes: enter "+path+": barriers: double barrier used with a different number of members: "+
		"a member there waits for 2 members, this one for 3\n", stderr)
	assert.Len(t, lockNodes(t, admin, path), 1, "the refused member left its node")
}

func TestBarrierCommands(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/gate"
	code, _, stderr := zkrecipes(t, "barrier", "set", path, "--data", "release-manager")
	require.Equal(t, 0, code, stderr)

	code, stdout, _ := zkrecipes(t, "inspect", "--json", path)
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, `"type": "barrier"`)

	code, _, stderr = zkrecipes(t, "barrier", "wait", path, "--timeout", "200ms", "--connect-timeout", "30s")
	assert.Equal(t, 75, code, stderr)

	waiter := command(t, "barrier", "wait", path)
	require.NoError(t, waiter.Start())
	code, _, stderr = zkrecipes(t, "barrier", "remove", path)
	require.Equal(t, 0, code, stderr)
	require.NoError(t, waiter.Wait(), "the waiter did not pass the removed barrier")

	code, _, _ = zkrecipes(t, "barrier", "wait", path)
	assert.Equal(t, 0, code, "waiting with no barrier passes at once")
}

// TestRevokeStopsARevocableHolder: `revoke PATH` asks the holder to let go;
// a `lock --revocable` stops its command and releases.
func TestRevokeStopsARevocableHolder(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/lock"
	holder := command(t, "lock", path, "--revocable", "--", "sleep", "30")
	require.NoError(t, holder.Start())
	waitNodes(t, admin, path, 1)

	code, stdout, stderr := zkrecipes(t, "revoke", path)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "asked "+path+"/")
	err := holder.Wait()
	require.Error(t, err, "sleep was not stopped")
	assert.Empty(t, lockNodes(t, admin, path))

	code, _, _ = zkrecipes(t, "revoke", path)
	assert.Equal(t, 1, code, "nobody holds it")
}

// TestRevokeRefusesWhatIsNotALockNode: revoking a node that does not exist
// or is not a lock node exits 1 and changes nothing; a holder that does not
// listen keeps its lock, and inspect says a revocation was asked for.
func TestRevokeRefusesWhatIsNotALockNode(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	lock, sem := root+"/lock", root+"/sem"
	holder := command(t, "lock", lock, "--", "sleep", "30")
	require.NoError(t, holder.Start())
	defer stop(holder)
	leaseHolder := command(t, "semaphore", sem, "--leases", "3", "--", "sleep", "30")
	require.NoError(t, leaseHolder.Start())
	defer stop(leaseHolder)
	waitNodes(t, admin, lock, 1)
	waitNodes(t, admin, sem+"/leases", 1)

	for _, args := range [][]string{{lock, lock + "/bogus"}, {lock, "bogus"}, {sem, sem}, {sem}} {
		code, stdout, stderr := zkrecipes(t, append([]string{"revoke"}, args...)...)
		assert.Equal(t, 1, code, "revoke %q: %s", args, stderr)
		assert.Contains(t, stderr, "not a revocable lock node", "revoke %q", args)
		assert.NotContains(t, stdout, "asked", "revoke %q", args)
	}
	ok, _, err := admin.Exists(lock + "/bogus")
	require.NoError(t, err)
	assert.False(t, ok)
	data, _, err := admin.Get(sem)
	require.NoError(t, err)
	assert.Equal(t, "maxLeases=3", string(data), "the semaphore's record")

	code, _, stderr := zkrecipes(t, "revoke", lock)
	require.Equal(t, 0, code, stderr)
	code, stdout, _ := zkrecipes(t, "inspect", lock)
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "revocation requested")
	assert.NotContains(t, stdout, "held by __REVOKE__")
}

func TestBarrierBadUsageExits64AndCreatesNothing(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	for _, args := range [][]string{
		{"double-barrier", root + "/b", "--members", "0", "--", "true"},
		{"double-barrier", root + "/b", "--", "true"},
		{"double-barrier", "relative", "--members", "2", "--", "true"},
		{"double-barrier", root + "/b", "--members", "2", "true"},
		{"barrier", "open", root + "/b"},
		{"barrier", "set", "relative"},
		{"barrier"},
		{"revoke"},
		{"revoke", "relative"},
		{"semaphore", root + "/b", "--leases", "2", "--revocable", "--", "true"},
	} {
		code, _, stderr := zkrecipes(t, args...)
		assert.Equal(t, 64, code, "%q: %s", args, stderr)
	}
	ok, _, err := admin.Exists(root)
	require.NoError(t, err)
	assert.False(t, ok, "bad usage created %s", root)
}

// TestDemoRunsAgainstAGivenServer runs the README's first command the way a
// user would with ZooKeeper already running.
func TestDemoRunsAgainstAGivenServer(t *testing.T) {
	code, stdout, stderr := zkrecipes(t, "demo", "--workers", "2", "--transfers", "1")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	for _, want := range []string{"has the write lock, alone", "moves 10", "left /zkrecipes-demo/batch", "nothing lost"} {
		assert.Contains(t, stdout, want)
	}
}

// TestDemoInterruptedLeavesNothing: a signal to the demo while its workers
// are at work is passed on to them; the demo waits for them, removes its
// files and exits 130, and nothing of it is left running.
func TestDemoInterruptedLeavesNothing(t *testing.T) {
	tmp := t.TempDir()
	cmd := command(t, "demo")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the workers join its group
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	// If the test fails, nothing of the demo outlives it.
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	sc := bufio.NewScanner(out)
	for sc.Scan() && !strings.Contains(sc.Text(), "entered "+"/zkrecipes-demo/batch") {
	}
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	for sc.Scan() {
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stderr:\n%s", stderr.String())
	assert.Equal(t, 130, ee.ExitCode(), "stderr:\n%s", stderr.String())
	assert.Contains(t, stderr.String(), "interrupted")
	assert.ErrorIs(t, syscall.Kill(-cmd.Process.Pid, 0), syscall.ESRCH, "a worker outlived the demo")
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Empty(t, left, "the demo left files behind")
}

// TestDemoWithoutServerSaysHowToGetOne: the installed command never starts a
// server; with none at the address it fails fast and names the ways to get
// one.
func TestDemoWithoutServerSaysHowToGetOne(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	nobody := l.Addr().String()
	require.NoError(t, l.Close())
	cmd := exec.Command(binary, "--servers", nobody, "demo")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	assert.Equal(t, 69, ee.ExitCode())
	assert.Contains(t, stderr.String(), "cannot reach ZooKeeper: recipes: connect to ["+nobody+"]")
	assert.Contains(t, stderr.String(), "make demo")
	assert.NotContains(t, stdout.String(), "worker-")
}

// TestOversizedDataExits64AndCreatesNothing: a double barrier whose opening
// transaction, with its path and --data, would be larger than ZooKeeper
// takes is a usage error naming the limit, before anything is created.
func TestOversizedDataExits64AndCreatesNothing(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	long := root + "/" + strings.Repeat("p", 100<<10)
	data := strings.Repeat("d", 100<<10)
	code, _, stderr := zkrecipes(t, "double-barrier", long, "--members", "10", "--data", data, "--timeout", "2s", "--", "true")
	assert.Equal(t, 64, code, stderr)
	assert.Contains(t, stderr, "1048575 bytes", "names the limit")
	assert.Less(t, len(stderr), 2000, "does not quote the path whole")
	ok, _, err := admin.Exists(root)
	require.NoError(t, err)
	assert.False(t, ok, "refused input created %s", root)
}
