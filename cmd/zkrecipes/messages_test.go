package main_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes/zktest"
)

// TestElectFailureSaysCampaign: a campaign refused on another recipe's path
// says so as a campaign, not as a lock, with or without --requeue, and names
// the path once.
func TestElectFailureSaysCampaign(t *testing.T) {
	t.Parallel()
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/mx"
	holder := startHolding(t, "lock", path)
	defer stop(holder)
	latch := zktest.Root(t, admin) + "/latch"
	leader := startHolding(t, "elect", latch)
	defer stop(leader)
	for _, c := range []struct {
		extra  []string
		prefix string
	}{
		{nil, "zkrecipes: campaign "},
		{[]string{"--requeue"}, "zkrecipes: election: campaign "}, // the Runner says whose failure
	} {
		// A selector is a mutex: it is refused on a latch's path.
		code, _, stderr := zkrecipes(t, append(append([]string{"elect", "--selector", latch}, c.extra...), "--", "true")...)
		assert.Equal(t, 65, code, stderr)
		assert.True(t, strings.HasPrefix(stderr, c.prefix+latch+": recipes: path used by another recipe"), "--selector %q: %s", c.extra, stderr)

		code, _, stderr = zkrecipes(t, append(append([]string{"elect", path}, c.extra...), "--", "true")...)
		assert.Equal(t, 65, code, stderr)
		assert.True(t, strings.HasPrefix(stderr, c.prefix+path+": recipes: path used by another recipe"), "%q: %s", c.extra, stderr)
		assert.Equal(t, 1, strings.Count(stderr, path+":"), "%q: %s", c.extra, stderr)
	}
}

// TestCommandThatCannotRunCreatesNothing: every command that runs CMD finds
// out that CMD cannot start before it connects: it exits 127, says why,
// and leaves no node.
func TestCommandThatCannotRunCreatesNothing(t *testing.T) {
	t.Parallel()
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	_, err := admin.Create(root, nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	defer func() { assert.NoError(t, admin.Delete(root, -1)) }()
	notExecutable := filepath.Join(t.TempDir(), "script")
	require.NoError(t, os.WriteFile(notExecutable, []byte("#!/bin/sh\n"), 0o644))

	p := root + "/p"
	for _, args := range [][]string{
		{"lock", p}, {"rlock", p}, {"wlock", p}, {"semaphore", p, "--leases", "1"},
		{"semaphore", p, "--count-path", root + "/count"}, {"semaphore-mutex", p},
		{"multilock", p + "," + root + "/q"}, {"double-barrier", p, "--members", "1"},
		{"elect", p}, {"elect", p, "--requeue"}, {"elect", p, "--selector", "-n"},
	} {
		for cmd, why := range map[string]string{
			"/nonexistent/cmd":     "cannot run /nonexistent/cmd: no such file or directory",
			"no-such-command-here": "cannot run no-such-command-here: executable file not found in $PATH",
			notExecutable:          "cannot run " + notExecutable + ": permission denied",
		} {
			code, _, stderr := zkrecipes(t, append(args, "--", cmd, "arg")...)
			assert.Equal(t, 127, code, "%q %s: %s", args, cmd, stderr)
			assert.Equal(t, "zkrecipes: "+args[0]+": "+why+"\n", stderr, "%q", args)
		}
	}
	names, _, err := admin.Children(root)
	require.NoError(t, err)
	assert.Empty(t, names, "a command that could not run created nodes")
}

// TestSemaphoreWithoutItsSharedCountExits65: a --count-path that names no
// node is the user's input, not an outage: exit 65 (not 69, on which a
// script would retry for ever), waiting or not, saying which node is
// missing; nothing is left behind.
func TestSemaphoreWithoutItsSharedCountExits65(t *testing.T) {
	t.Parallel()
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	count := root + "/count"
	for _, extra := range [][]string{nil, {"-n"}, {"--timeout", "20s"}} {
		args := append(append([]string{"semaphore", root + "/sem", "--count-path", count}, extra...), "--", "true")
		code, _, stderr := zkrecipes(t, args...)
		assert.Equal(t, 65, code, "%q: %s", extra, stderr)
		assert.Contains(t, stderr, "locks: shared count does not exist: "+count+" (SetSharedCount", "%q", extra)
	}
	eventually(t, func() bool { // once ZooKeeper has reaped the containers
		names, _, err := admin.Children(root)
		return errors.Is(err, zk.ErrNoNode) || err == nil && len(names) == 0
	})
}
