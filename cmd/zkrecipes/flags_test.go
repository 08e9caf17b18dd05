package main_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes/zktest"
)

// TestEachCommandHasItsOwnHelp: `COMMAND --help` and `help COMMAND` print
// the command's own usage and exit 0; a usage error points at it.
func TestEachCommandHasItsOwnHelp(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"lock", "rlock", "wlock", "semaphore", "semaphore-mutex", "multilock",
		"double-barrier", "elect", "barrier", "revoke", "inspect", "leader", "demo"} {
		code, help, stderr := zkrecipes(t, name, "--help")
		require.Equal(t, 0, code, "%s --help: %s", name, stderr)
		assert.True(t, strings.HasPrefix(help, "usage: zkrecipes "+name+" "), "%s --help: %s", name, help)
		code, same, _ := zkrecipes(t, "help", name)
		assert.Equal(t, 0, code)
		assert.Equal(t, help, same, "help %s", name)
		for line := range strings.Lines(help) {
			assert.LessOrEqual(t, len(strings.TrimRight(line, "\n")), 80, "%s --help: a line wider than 80 columns: %q", name, line)
		}
		assert.Empty(t, shortLines(help), "%s --help: lines that end well before the next word would need", name)
		switch name {
		case "barrier", "revoke", "inspect", "leader", "demo":
		case "elect":
			assert.Contains(t, help, "79  leadership lost while CMD ran", "%s --help", name)
		case "double-barrier":
			assert.NotContains(t, help, "\n  79 ", "%s --help: nothing of it can be lost", name)
		default:
			assert.Contains(t, help, "79  lock lost while CMD ran", "%s --help", name)
		}
		switch name {
		case "multilock", "double-barrier":
			assert.NotContains(t, help, "-n found it busy", "%s --help: refuses -n", name)
		case "lock", "rlock", "wlock", "semaphore", "semaphore-mutex", "elect":
			assert.Contains(t, help, "75  timed out waiting, or -n found it busy", "%s --help", name)
		}
		if strings.Contains(help, "-- CMD") {
			assert.Contains(t, help, "127 CMD not found or not executable", "%s --help", name)
		}
		assert.NotContains(t, help, "1   revoke: nothing to revoke", "%s --help: another command's exit status", name)
		if name == "multilock" || name == "double-barrier" {
			assert.NotContains(t, help, "--timeout 0, -n\n", "%s --help: offers the -n it refuses", name)
		}
	}
	code, global, _ := zkrecipes(t, "--help")
	assert.Equal(t, 0, code)
	for line := range strings.Lines(global) {
		assert.LessOrEqual(t, len(strings.TrimRight(line, "\n")), 80, "--help: a line wider than 80 columns: %q", line)
	}
	assert.Empty(t, shortLines(global), "--help: lines that end well before the next word would need")
	code, help, _ := zkrecipes(t, "lock", "/a", "-h", "--", "true")
	assert.Equal(t, 0, code)
	assert.Contains(t, help, "--revocable")
	code, _, stderr := zkrecipes(t, "lock", "/a", "--bogus", "--", "true")
	assert.Equal(t, 64, code)
	assert.Contains(t, stderr, "Run 'zkrecipes lock --help' for usage.")
}

// TestFlagErrorsNameTheFlag: a bad duration names the flag and the value
// (but a bad --auth hides its value); a flag given twice is a usage error;
// bad --auth and --acl values are refused; nothing is created.
func TestFlagErrorsNameTheFlag(t *testing.T) {
	t.Parallel()
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/lock"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"lock", path, "--timeout", "abc", "--", "true"}, `--timeout "abc": not a duration`},
		{[]string{"lock", path, "--timeout", "-1s", "--", "true"}, `--timeout "-1s": must not be negative`},
		{[]string{"lock", path, "--session-timeout", "0", "--", "true"}, `--session-timeout "0": must be positive`},
		// command() gives --session-timeout before the command already.
		{[]string{"--session-timeout", "5s", "lock", path, "--", "true"}, `--session-timeout "5s": given twice`},
		{[]string{"lock", path, "--data", "a", "--data", "b", "--", "true"}, `--data "b": given twice`},
		{[]string{"semaphore", path, "--leases", "2", "--leases", "3", "--", "true"}, `--leases "3": given twice`},
		{[]string{"lock", path, "-n", "--timeout", "1s", "--", "true"}, "-n and --timeout exclude each other"},
		{[]string{"multilock", path + "," + path + "2", "-n", "--", "true"}, "multilock: cannot try once"},
		{[]string{"double-barrier", path, "--members", "2", "--timeout", "0", "--", "true"}, "double-barrier: cannot try once"},
		{[]string{"lock", path, "--bogus", "--", "true"}, "lock: unknown flag --bogus"},
		{[]string{"lock", path, "-x", "--", "true"}, "lock: unknown flag -x"},
		{[]string{"semaphore", path, "--", "true"}, "--leases N (at least 1) is required"},
		{[]string{"semaphore", path, "--leases", "-1", "--", "true"}, "--leases -1: must be at least 1"},
		{[]string{"semaphore", path, "--leases", "2147483648", "--", "true"}, "--leases 2147483648: must be at most 2147483647 (Curator's limit, a Java int)"},
		{[]string{"semaphore", path, "--leases", "2", "--count-path", path + "n", "--", "true"}, "--leases N or --count-path P, not both"},
		{[]string{"semaphore", path, "--count-path", "count", "--", "true"}, "--count-path: "},
		{[]string{"double-barrier", path, "--members", "0", "--", "true"}, "--members 0: must be at least 1"},
		// --auth and --acl (never echoing credentials: see below).
		{[]string{"--auth", "nocolon", "lock", path, "--", "true"}, "--auth (not shown): not SCHEME:CREDENTIALS"},
		{[]string{"--auth", "digest:secretuser", "lock", path, "--", "true"}, "--auth (not shown): digest credentials are user:password"},
		{[]string{"--acl", "world:anyone", "lock", path, "--", "true"}, `entry "world:anyone" is not SCHEME:ID:PERMS`},
		{[]string{"--acl", "world:anyone:rx", "lock", path, "--", "true"}, `permission 'x' is not one of cdrwa`},
		{[]string{"--acl", "world:anyone:", "lock", path, "--", "true"}, "gives no permission"},
		{[]string{"--acl", "", "lock", path, "--", "true"}, "is empty"},
		{[]string{"--acl", "world:someone:r", "lock", path, "--", "true"}, "the world scheme's only id is anyone"},
		{[]string{"--acl", "creator", "lock", path, "--", "true"}, "has none (WithAuth)"},
		{[]string{"--acl", "world:anyone:r,ip:127.0.0.1:w", "lock", path, "--", "true"}, "grants nobody create permission"},
	} {
		code, _, stderr := zkrecipes(t, c.args...)
		assert.Equal(t, 64, code, "%q: %s", c.args, stderr)
		assert.Contains(t, stderr, c.want, "%q", c.args)
		assert.NotContains(t, stderr, "secretuser", "%q: credentials in an error", c.args)
	}
	ok, _, err := admin.Exists(path)
	require.NoError(t, err)
	assert.False(t, ok, "bad usage created %s", path)
}

// TestCountLimitsNeedNoServer: more leases or members than Curator's limit
// (a Java int) is a usage error found before connecting: with no server at
// the address (port 1), it still exits 64, not 69.
func TestCountLimitsNeedNoServer(t *testing.T) {
	t.Parallel()
	code, _, stderr := zkrecipes(t, "semaphore", "/leases", "--servers", "127.0.0.1:1", "--leases", "2147483648", "--", "true")
	assert.Equal(t, 64, code, stderr)
	assert.Contains(t, stderr, "semaphore: --leases 2147483648: must be at most 2147483647 (Curator's limit, a Java int)")
	code, _, stderr = zkrecipes(t, "double-barrier", "/members", "--servers", "127.0.0.1:1", "--members", "2147483648", "--", "true")
	assert.Equal(t, 64, code, stderr)
	assert.Contains(t, stderr, "double-barrier: --members 2147483648: must be at most 2147483647 (Curator's limit, a Java int)")
}

// TestTryOnce: -n and --timeout 0 try once, like flock -n: a held lock or a
// barrier that is up exits 75 at once and leaves nothing behind; a free one
// is taken.
func TestTryOnce(t *testing.T) {
	t.Parallel()
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	path := root + "/lock"
	holder := command(t, "lock", path, "--data", "the-holder", "--", "sleep", "30")
	require.NoError(t, holder.Start())
	defer stop(holder)
	waitNodes(t, admin, path, 1)
	before := lockNodes(t, admin, path)
	for _, try := range [][]string{{"-n"}, {"--timeout", "0"}} {
		args := append(append([]string{"lock", path, "--connect-timeout", "30s"}, try...), "--", "true")
		code, _, stderr := zkrecipes(t, args...)
		assert.Equal(t, 75, code, "%q: %s", args, stderr)
		assert.Contains(t, stderr, path+" is busy (tried once)")
		assert.Equal(t, before, lockNodes(t, admin, path), "%q left a node", args)

		free := append(append([]string{"lock", root + "/free"}, try...), "--", "true")
		code, _, stderr = zkrecipes(t, free...)
		assert.Equal(t, 0, code, "%q: %s", free, stderr)
	}

	barrier := root + "/barrier"
	code, _, stderr := zkrecipes(t, "barrier", "wait", barrier, "-n", "--connect-timeout", "30s")
	assert.Equal(t, 0, code, "a barrier that is down: %s", stderr)
	code, _, stderr = zkrecipes(t, "barrier", "set", barrier)
	require.Equal(t, 0, code, stderr)
	code, _, stderr = zkrecipes(t, "barrier", "wait", barrier, "--timeout", "0", "--connect-timeout", "30s")
	assert.Equal(t, 75, code, "a barrier that is up: %s", stderr)
	assert.Contains(t, stderr, barrier+" is up (checked once)")
	code, _, stderr = zkrecipes(t, "barrier", "remove", barrier, "-n", "--connect-timeout", "30s")
	assert.Equal(t, 0, code, stderr)
}

// TestSemaphoreLeasesMismatchExits65: another --leases than the one in use
// is not a usage error but a conflict with what is at the path.
func TestSemaphoreLeasesMismatchExits65(t *testing.T) {
	t.Parallel()
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/sem"
	holder := command(t, "semaphore", path, "--leases", "3", "--", "sleep", "30")
	require.NoError(t, holder.Start())
	defer stop(holder)
	waitNodes(t, admin, path+"/leases", 1)
	code, _, stderr := zkrecipes(t, "semaphore", path, "--leases", "2", "--timeout", "10s", "--", "true")
	assert.Equal(t, 65, code, stderr)
	assert.Contains(t, stderr, "different number of leases")
}

// TestSemaphoreCountPath: --count-path takes the number of leases from a
// shared count (Curator's SharedCount), read as the command reaches the
// front of the queue.
func TestSemaphoreCountPath(t *testing.T) {
	t.Parallel()
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	path, count := root+"/sem", root+"/count"
	_, err := admin.Create(root, nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	_, err = admin.Create(count, []byte{0, 0, 0, 1}, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	defer func() {
		require.NoError(t, admin.Delete(count, -1))
		eventually(t, func() bool { // once ZooKeeper has reaped the semaphore
			err := admin.Delete(root, -1)
			return err == nil || errors.Is(err, zk.ErrNoNode)
		})
	}()

	holder := command(t, "semaphore", path, "--count-path", count, "--", "sleep", "30")
	require.NoError(t, holder.Start())
	defer stop(holder)
	waitNodes(t, admin, path+"/leases", 1)
	code, _, stderr := zkrecipes(t, "semaphore", path, "--count-path", count, "-n", "--connect-timeout", "30s", "--", "true")
	assert.Equal(t, 75, code, "a count of 1, held: %s", stderr)

	_, err = admin.Set(count, []byte{0, 0, 0, 2}, -1)
	require.NoError(t, err)
	code, _, stderr = zkrecipes(t, "semaphore", path, "--count-path", count, "-n", "--connect-timeout", "30s", "--", "true")
	assert.Equal(t, 0, code, "a count of 2, one held: %s", stderr)
}

// shortLines returns the lines of help's prose (and of its flags'
// descriptions) that break before the next line's first word though it
// would fit well within the width: "again. Unless\nstdin is ...".
func shortLines(help string) []string {
	lines := strings.Split(help, "\n")
	var short []string
	for i, a := range lines[:len(lines)-1] {
		b := strings.TrimLeft(lines[i+1], " ")
		if a == "" || b == "" || len(a)-len(strings.TrimLeft(a, " ")) != len(lines[i+1])-len(b) {
			continue // a paragraph's end, or the start of a table's or a list's next item
		}
		if next, _, _ := strings.Cut(b, " "); b[0] >= 'a' && b[0] <= 'z' && len(a)+1+len(next) <= 60 {
			short = append(short, a)
		}
	}
	return short
}
