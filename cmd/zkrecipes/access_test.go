package main_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes/zktest"
)

// TestAuthAndACLFlags: a lock taken with --auth and --acl creator belongs
// to that identity: inspect without the credentials fails and says why,
// inspect with them (from the environment) works, and so does a second
// holder with them.
func TestAuthAndACLFlags(t *testing.T) {
	t.Parallel()
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/acl/lock"
	holder := command(t, "--auth", "digest:ops:pw", "--acl", "creator", "lock", path, "--", "sleep", "60")
	require.NoError(t, holder.Start())
	defer stop(holder)
	owner := zktest.Connect(t, zktest.Servers(t))
	require.NoError(t, owner.AddAuth("digest", []byte("ops:pw")))
	eventually(t, func() bool { return len(lockNodes(t, owner, path)) == 1 })
	acl, _, err := owner.GetACL(path)
	require.NoError(t, err)
	require.Len(t, acl, 1)
	assert.Equal(t, "digest", acl[0].Scheme)
	assert.True(t, strings.HasPrefix(acl[0].ID, "ops:"), acl[0].ID)

	code, _, stderr := zkrecipes(t, "inspect", path)
	assert.Equal(t, 77, code, stderr)
	assert.Contains(t, stderr, "not authenticated")
	assert.Contains(t, stderr, "--auth")
	code, _, stderr = zkrecipes(t, "lock", path, "-n", "--connect-timeout", "30s", "--", "true")
	assert.Equal(t, 77, code, "joining without the credentials: %s", stderr)

	inspect := command(t, "inspect", path)
	inspect.Env = append(os.Environ(), "ZKRECIPES_AUTH=digest:ops:pw")
	out, err := inspect.Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), "held by")

	code, _, stderr = zkrecipes(t, "--auth", "digest:ops:pw", "lock", path, "-n", "--connect-timeout", "30s", "--", "true")
	assert.Equal(t, 75, code, "the lock is held: %s", stderr)

	// The command run under the lock does not get the credentials.
	stop(holder)
	env := command(t, "lock", path, "--", "env")
	env.Env = append(os.Environ(), "ZKRECIPES_AUTH=digest:ops:pw")
	out, err = env.Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), "ZKRECIPES_LOCK_PATH=")
	assert.NotContains(t, string(out), "ZKRECIPES_AUTH")
}

// TestAccessFromTheEnvironment: a bad $ZKRECIPES_ACL or $ZKRECIPES_AUTH is
// a usage error that names the variable (not the credentials).
func TestAccessFromTheEnvironment(t *testing.T) {
	t.Parallel()
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/lock"
	bad := command(t, "lock", path, "--", "true")
	bad.Env = append(os.Environ(), "ZKRECIPES_ACL=digest:x")
	out, err := bad.CombinedOutput()
	assert.Equal(t, 64, bad.ProcessState.ExitCode(), "%s (%v)", out, err)
	assert.Contains(t, string(out), "$ZKRECIPES_ACL")
	bad = command(t, "lock", path, "--", "true")
	bad.Env = append(os.Environ(), "ZKRECIPES_AUTH=digest:nopassword")
	out, err = bad.CombinedOutput()
	assert.Equal(t, 64, bad.ProcessState.ExitCode(), "%s (%v)", out, err)
	assert.Contains(t, string(out), "$ZKRECIPES_AUTH")
	assert.NotContains(t, string(out), "nopassword", "credentials in an error")
	ok, _, err := admin.Exists(path)
	require.NoError(t, err)
	assert.False(t, ok, "a bad ACL or credential created the lock")
}

// TestChrootInServers: a chroot at the end of --servers, as ZooKeeper's own
// clients take it, puts the command's lock below it, and inspect under the
// same chroot sees it by its relative path.
func TestChrootInServers(t *testing.T) {
	t.Parallel()
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	servers := strings.Join(zktest.Servers(t), ",") + root + "/app"
	holder := exec.Command(binary, "--servers", servers, "lock", "/jobs/x", "--", "sleep", "60")
	require.NoError(t, holder.Start())
	defer stop(holder)
	waitNodes(t, admin, root+"/app/jobs/x", 1)
	out, err := exec.Command(binary, "--servers", servers, "inspect", "/jobs/x").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "/jobs/x: mutex, held by")
	assert.NotContains(t, string(out), root, "inspect under a chroot shows paths relative to it")
}
