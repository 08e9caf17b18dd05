package main_test

import (
	"bufio"
	"encoding/json"
	"net"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes/zktest"
)

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// TestConnectTimeout: with ZooKeeper unreachable, -n gives up connecting
// after its own few seconds, --connect-timeout bounds connecting for any
// command, and the error says which servers were tried, for how long and
// what set that bound. The bounds asserted are 4 times the connect timeout:
// the command must end because the bound passed, not because something
// else (the old 15 s) did.
func TestConnectTimeout(t *testing.T) {
	t.Parallel()
	closed := closedPort(t)
	for _, c := range []struct {
		args  []string
		want  string
		bound time.Duration
	}{
		{[]string{"lock", "/unreachable", "-n", "--", "true"},
			"no session within 5s (the default --connect-timeout with -n)", 4 * 5 * time.Second},
		{[]string{"--connect-timeout", "1s", "lock", "/unreachable", "--", "true"},
			"no session within 1s (--connect-timeout)", 4 * time.Second},
		{[]string{"lock", "/unreachable", "-n", "--connect-timeout", "1s", "--", "true"},
			"no session within 1s (--connect-timeout)", 4 * time.Second},
		{[]string{"--connect-timeout", "1s", "inspect", "/unreachable"},
			"no session within 1s (--connect-timeout)", 4 * time.Second},
		{[]string{"lock", "/unreachable", "--timeout", "1s", "--", "true"},
			"no session within 1s (--timeout, which bounds connecting too)", 4 * time.Second},
	} {
		// Not zkrecipes(), which gives the test servers.
		p := exec.Command(binary, append([]string{"--servers", closed}, c.args...)...)
		var out strings.Builder
		p.Stderr = &out
		start := time.Now()
		_ = p.Run()
		took := time.Since(start)
		code, stderr := p.ProcessState.ExitCode(), out.String()
		assert.Equal(t, 69, code, "%q: %s", c.args, stderr)
		assert.Contains(t, stderr, "cannot reach ZooKeeper: recipes: connect to ["+closed+"]: ", "%q", c.args)
		assert.Equal(t, 1, strings.Count(stderr, "["+closed), "%q: the servers listed once: %s", c.args, stderr)
		assert.Contains(t, stderr, c.want, "%q", c.args)
		assert.Contains(t, stderr, "connection refused", "%q: the last attempt", c.args)
		assert.Less(t, took, c.bound, "%q", c.args)
	}
	code, _, stderr := zkrecipes(t, "--connect-timeout", "0", "inspect", "/x")
	assert.Equal(t, 64, code, stderr)
	assert.Contains(t, stderr, `--connect-timeout "0": must be positive`)
}

// TestRefusedConnectionFailsSoon: the commands that only look (inspect,
// leader, revoke) give up once every attempt for 3s has been refused, not
// after the 15s a command that waits for a recipe keeps trying, and the
// message names the servers once. (The bound asserted is far above the 3s
// and a round that the design gives, and below the 15s.)
func TestRefusedConnectionFailsSoon(t *testing.T) {
	t.Parallel()
	closed, other := closedPort(t), closedPort(t)
	servers := closed + "," + other
	for _, args := range [][]string{{"inspect", "/x"}, {"inspect", "-r", "/"}, {"leader", "/x"}, {"revoke", "/x"}} {
		p := exec.Command(binary, append([]string{"--servers", servers}, args...)...)
		var out strings.Builder
		p.Stderr = &out
		start := time.Now()
		_ = p.Run()
		took := time.Since(start)
		stderr := out.String()
		assert.Equal(t, 69, p.ProcessState.ExitCode(), "%q: %s", args, stderr)
		assert.Contains(t, stderr, "zkrecipes: cannot reach ZooKeeper: recipes: connect to ["+closed+" "+other+"]: every connection refused for 3s", "%q", args)
		assert.Equal(t, 1, strings.Count(stderr, "["+closed), "%q: the servers listed once: %s", args, stderr)
		assert.Less(t, took, 10*time.Second, "%q", args)
	}
}

// TestSessionTimeoutBoundsAndGrant: a session timeout ZooKeeper can never be
// asked for (below 1ms, or past go-zookeeper's 32-bit milliseconds) is a
// usage error that creates nothing; one the server bounds (the test servers
// grant 200ms to 60s) is reported with what it granted, -q or not, and one
// granted as asked is not.
func TestSessionTimeoutBoundsAndGrant(t *testing.T) {
	t.Parallel()
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/lock"
	for _, d := range []string{"1000h", "100us"} {
		code, _, stderr := zkrecipes(t, "lock", path, "--session-timeout", d, "--", "true")
		assert.Equal(t, 64, code, "%s: %s", d, stderr)
		assert.Contains(t, stderr, `--session-timeout "`+d+`": ZooKeeper takes a session timeout from 1ms to `)
	}
	ok, _, err := admin.Exists(path)
	require.NoError(t, err)
	assert.False(t, ok, "bad usage created %s", path)

	for _, c := range []struct{ asked, granted string }{{"100ms", "200ms"}, {"2m0s", "1m0s"}} {
		code, _, stderr := zkrecipes(t, "lock", path, "-q", "--session-timeout", c.asked, "--", "true")
		assert.Equal(t, 0, code, stderr)
		assert.Contains(t, stderr, "ZooKeeper granted a session timeout of "+c.granted+", not the "+c.asked+" asked")
	}
	code, _, stderr := zkrecipes(t, "lock", path, "--", "true")
	assert.Equal(t, 0, code, stderr)
	assert.NotContains(t, stderr, "granted")
}

// TestQuietFlag: -q leaves out the status lines (acquired, waiting, entered,
// left) but not the errors.
func TestQuietFlag(t *testing.T) {
	t.Parallel()
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	code, stdout, stderr := zkrecipes(t, "lock", root+"/free", "-q", "--", "echo", "ran")
	assert.Equal(t, 0, code, stderr)
	assert.Equal(t, "ran\n", stdout)
	assert.Empty(t, stderr)

	holder := startHolding(t, "lock", root+"/held", "--data", "the-holder")
	defer stop(holder)
	code, _, stderr = zkrecipes(t, "lock", root+"/held", "-q", "--timeout", "300ms", "--connect-timeout", "30s", "--", "true")
	assert.Equal(t, 75, code, stderr)
	assert.Equal(t, "zkrecipes: timed out waiting for "+root+"/held\n", stderr)

	code, _, stderr = zkrecipes(t, "double-barrier", root+"/db", "--members", "1", "-q", "--", "true")
	assert.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr)

	code, _, stderr = zkrecipes(t, "barrier", "set", root+"/b", "-q")
	require.Equal(t, 0, code, stderr)
	code, _, stderr = zkrecipes(t, "barrier", "wait", root+"/b", "-q", "--timeout", "300ms", "--connect-timeout", "30s")
	assert.Equal(t, 75, code, stderr)
	assert.NotContains(t, stderr, "waiting at barrier")
	assert.Contains(t, stderr, "timed out")
	code, _, stderr = zkrecipes(t, "barrier", "remove", root+"/b", "-q")
	assert.Equal(t, 0, code, stderr)
}

// waitingLine starts zkrecipes with args and returns the first of its
// waiting lines that match, then stops it.
func waitingLine(t *testing.T, match func(string) bool, args ...string) string {
	t.Helper()
	p := command(t, args...)
	errs, err := p.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, p.Start())
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(errs)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	defer func() {
		// Stopped, it closes its end of the pipe.
		_ = p.Process.Signal(syscall.SIGTERM)
		for range lines {
		}
		_ = p.Wait()
	}()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			require.True(t, ok, "zkrecipes ended without the line")
			if strings.Contains(line, "waiting for") && match(line) {
				return line
			}
		case <-timeout:
			t.Fatal("timed out waiting for the line")
		}
	}
}

// TestSemaphoreWaitLineNamesWhoItWaitsFor: a semaphore's waiting line names
// its lease holders, and, when no lease is held, the acquirer at its gate
// (here a mutex held on the gate's path, as an acquirer stalled there
// would).
func TestSemaphoreWaitLineNamesWhoItWaitsFor(t *testing.T) {
	t.Parallel()
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	first := func(string) bool { return true }

	holder := startHolding(t, "semaphore", root+"/sem", "--leases", "1", "--data", "lease-holder")
	defer stop(holder)
	line := waitingLine(t, first, "semaphore", root+"/sem", "--leases", "1", "--", "true")
	assert.Contains(t, line, "held by lease-holder")

	gate := startHolding(t, "lock", root+"/gated/locks", "--data", "gate-holder")
	defer stop(gate)
	line = waitingLine(t, first, "semaphore", root+"/gated", "--leases", "1", "--", "true")
	assert.Contains(t, line, "no lease held, gate-holder taking one")
}

// TestMultilockWaitLineLeavesItselfOut: a multi-lock that holds /a and waits
// for /b names /b's holder, never itself as /a's.
func TestMultilockWaitLineLeavesItselfOut(t *testing.T) {
	t.Parallel()
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	a, b := root+"/a", root+"/b"
	holder := startHolding(t, "lock", b, "--data", "b-holder")
	defer stop(holder)
	// The lines that come once it is queued at /b, and so holds /a: the
	// first may come before.
	queued := false
	line := waitingLine(t, func(string) bool {
		if !queued {
			queued = len(lockNodes(t, admin, b)) == 2
			return false
		}
		return true
	}, "multilock", a+","+b, "--data", "the-multilock", "--", "true")
	assert.Contains(t, line, b+" held by b-holder")
	assert.NotContains(t, line, "the-multilock")
}

// TestBarrierHelpShowsOnlyItsExitStatuses: barrier's own exit table, with
// none of the locks' (a semaphore's --leases, a lost lock).
func TestBarrierHelpShowsOnlyItsExitStatuses(t *testing.T) {
	t.Parallel()
	code, help, stderr := zkrecipes(t, "barrier", "--help")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, help, "65  PATH is used by a lock or a double barrier")
	assert.Contains(t, help, "75  wait: timed out, or -n found the barrier up")
	for _, other := range []string{"--leases", "79", "busy", "CMD's own status"} {
		assert.NotContains(t, help, other)
	}
}

// TestBarrierWaitOnALockPathExits65: waiting for a barrier at a path a lock
// uses is refused at once, not a wait for the lock's container to go.
func TestBarrierWaitOnALockPathExits65(t *testing.T) {
	t.Parallel()
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/p"
	holder := startHolding(t, "lock", path)
	defer stop(holder)
	code, _, stderr := zkrecipes(t, "barrier", "wait", path, "--timeout", "20s")
	assert.Equal(t, 65, code, stderr)
	assert.Contains(t, stderr, "path used by another recipe")
}

// TestInspectRecursive: inspect -r on a parent lists every recipe at or below
// it, in path order, with its holders, and none of a recipe's own nodes (a
// semaphore's gate and leases) as a recipe of their own; --json too.
func TestInspectRecursive(t *testing.T) {
	t.Parallel()
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	for _, args := range [][]string{
		{"lock", root + "/jobs/a/job", "--data", "job-holder"},
		{"semaphore", root + "/jobs/sem", "--leases", "2", "--data", "sem-holder"},
		{"rlock", root + "/jobs/a/rw", "--data", "reader"},
	} {
		p := startHolding(t, args...)
		defer stop(p)
	}
	code, _, stderr := zkrecipes(t, "barrier", "set", root+"/jobs/b/gate", "--data", "setter")
	require.Equal(t, 0, code, stderr)
	defer func() { zkrecipes(t, "barrier", "remove", root+"/jobs/b/gate") }()

	code, stdout, stderr := zkrecipes(t, "inspect", "-r", root+"/jobs")
	require.Equal(t, 0, code, stderr)
	var heads []string
	for line := range strings.Lines(stdout) {
		if !strings.HasPrefix(line, " ") {
			heads = append(heads, strings.TrimSpace(line))
		}
	}
	require.Len(t, heads, 4, stdout)
	assert.True(t, strings.HasPrefix(heads[0], root+"/jobs/a/job: mutex, held by job-holder"), heads[0])
	assert.True(t, strings.HasPrefix(heads[1], root+"/jobs/a/rw: rwlock, held by reader"), heads[1])
	assert.True(t, strings.HasPrefix(heads[2], root+"/jobs/b/gate: barrier, up, set by setter"), heads[2])
	assert.True(t, strings.HasPrefix(heads[3], root+"/jobs/sem: semaphore, 2 leases, held by sem-holder"), heads[3])

	code, stdout, stderr = zkrecipes(t, "inspect", "-r", "--json", root)
	require.Equal(t, 0, code, stderr)
	var tree struct {
		Path    string
		Recipes []struct {
			Path, Type string
			Holders    []struct{ Data string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &tree), stdout)
	assert.Equal(t, root, tree.Path)
	var got []string
	for _, r := range tree.Recipes {
		got = append(got, r.Path+" "+r.Type)
	}
	assert.Equal(t, []string{
		root + "/jobs/a/job mutex", root + "/jobs/a/rw rwlock", root + "/jobs/b/gate barrier", root + "/jobs/sem semaphore",
	}, got)
	require.Len(t, tree.Recipes, 4)
	require.Len(t, tree.Recipes[3].Holders, 1)
	assert.Equal(t, "sem-holder", tree.Recipes[3].Holders[0].Data)

	code, stdout, _ = zkrecipes(t, "inspect", "-r", root+"/nothing-here")
	assert.Equal(t, 1, code)
	assert.Equal(t, root+"/nothing-here: does not exist\n", stdout)
}

// TestInspectRecursiveFromTheRoot: inspect -r / lists every recipe there is,
// none of ZooKeeper's own tree, and leaves out, saying so, what the ACL keeps
// from it; under a chroot, / is the chroot. inspect / without -r is still
// refused, and says what lists everything.
func TestInspectRecursiveFromTheRoot(t *testing.T) {
	t.Parallel()
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	holder := startHolding(t, "lock", root+"/app/jobs/a", "--data", "root-walk")
	defer stop(holder)
	// Readable by nobody but the super user: not a barrier, not an error.
	_, err := admin.Create(root+"/app/private", []byte("x"), 0, zk.WorldACL(zk.PermAll&^zk.PermRead))
	require.NoError(t, err)
	defer func() { assert.NoError(t, admin.Delete(root+"/app/private", -1)) }()

	servers := strings.Join(zktest.Servers(t), ",") + root + "/app"
	p := exec.Command(binary, "--servers", servers, "inspect", "-r", "/")
	var stdout, stderr strings.Builder
	p.Stdout, p.Stderr = &stdout, &stderr
	_ = p.Run()
	require.Equal(t, 0, p.ProcessState.ExitCode(), stderr.String())
	assert.True(t, strings.HasPrefix(stdout.String(), "/jobs/a: mutex, held by root-walk"), stdout.String())
	assert.Equal(t, 1, strings.Count(stdout.String(), ": "), "one recipe, one head line: %s", stdout.String())
	assert.Contains(t, stderr.String(), "/private")
	assert.Contains(t, stderr.String(), "left out")

	code, out, errOut := zkrecipes(t, "inspect", "-r", "--json", "/")
	require.Equal(t, 0, code, errOut)
	var tree struct {
		Path    string
		Recipes []struct{ Path, Type string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &tree), out)
	assert.Equal(t, "/", tree.Path)
	var paths []string
	for _, r := range tree.Recipes {
		paths = append(paths, r.Path+" "+r.Type)
		assert.False(t, strings.HasPrefix(r.Path, "/zookeeper"), r.Path)
	}
	assert.Contains(t, paths, root+"/app/jobs/a mutex")
	assert.NotContains(t, paths, root+"/app/private barrier")

	code, _, errOut = zkrecipes(t, "inspect", "/")
	assert.Equal(t, 64, code, errOut)
	assert.Contains(t, errOut, "inspect -r / lists every recipe")
}

// TestInspectRecursiveWalksADirectoryNamedLikeAMember: a directory of the
// user's named by a UUID (a tenant's, say) looks like a double barrier's
// member, but it is persistent: inspect -r walks into it and finds the
// recipes below, beside a double barrier whose waiting member it skips.
func TestInspectRecursiveWalksADirectoryNamedLikeAMember(t *testing.T) {
	t.Parallel()
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	const tenant = "0b9a4f1e-6c1d-4d5e-9f00-1a2b3c4d5e6f"
	holder := startHolding(t, "lock", root+"/tenants/"+tenant+"/jobs", "--data", "tenant-job")
	defer stop(holder)
	member := command(t, "double-barrier", root+"/tenants/batch", "--members", "2", "--", "true")
	require.NoError(t, member.Start())
	defer stop(member)
	waitNodes(t, admin, root+"/tenants/batch", 1)

	code, out, errOut := zkrecipes(t, "inspect", "-r", "--json", root+"/tenants")
	require.Equal(t, 0, code, errOut)
	var tree struct{ Recipes []struct{ Path, Type string } }
	require.NoError(t, json.Unmarshal([]byte(out), &tree), out)
	var paths []string
	for _, r := range tree.Recipes {
		paths = append(paths, r.Path+" "+r.Type)
	}
	assert.Equal(t, []string{root + "/tenants/" + tenant + "/jobs mutex", root + "/tenants/batch double-barrier"}, paths)
}
