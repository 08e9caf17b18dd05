package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes/internal/zkserver"
	"github.com/zkrecipes/recipes/zktest"
)

// as runs cmd with $ZKRECIPES_AUTH set to creds.
func as(cmd *exec.Cmd, creds string) *exec.Cmd {
	cmd.Env = append(os.Environ(), "ZKRECIPES_AUTH="+creds)
	return cmd
}

// runAs runs zkrecipes args as creds and returns its exit status and
// stderr.
func runAs(t *testing.T, creds string, args ...string) (int, string) {
	t.Helper()
	cmd := as(command(t, args...), creds)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !assert.ErrorAs(t, err, &ee) {
		t.FailNow()
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// TestSharedParentFromTheCommandLine: the two services, billing
// and payroll, each with --acl creator, lock beside each other under
// /shared whichever came first; payroll cannot join billing's lock, and the
// exit-77 message names the node refused and the permission. With
// --parent-acl creator, billing keeps /shared to itself, and payroll's
// refusal names /shared.
func TestSharedParentFromTheCommandLine(t *testing.T) {
	t.Parallel()
	const billing, payroll = "digest:billing:secret", "digest:payroll:pw"
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	super := zktest.Connect(t, zktest.Servers(t))
	require.NoError(t, super.AddAuth("digest", []byte(zkserver.SuperCredentials)))

	shared := root + "/shared"
	holder := as(command(t, "--acl", "creator", "lock", shared+"/billing/job", "--", "sleep", "60"), billing)
	require.NoError(t, holder.Start())
	defer stop(holder)
	waitNodes(t, super, shared+"/billing/job", 1)

	code, stderr := runAs(t, payroll, "--acl", "creator", "lock", shared+"/payroll/job", "-n", "--connect-timeout", "30s", "--", "true")
	assert.Equal(t, 0, code, "payroll locks beside billing: %s", stderr)
	code, stderr = runAs(t, payroll, "--acl", "creator", "lock", shared+"/billing/job", "-n", "--connect-timeout", "30s", "--", "true")
	assert.Equal(t, 77, code, "payroll joins billing's lock: %s", stderr)
	assert.Contains(t, stderr, "not authenticated: needs create permission on "+shared+"/billing/job\n")
	assert.Contains(t, stderr, "The nodes' ACL does not let this identity in: authenticate with --auth")
	code, stderr = runAs(t, payroll, "inspect", shared+"/billing/job")
	assert.Equal(t, 77, code, "payroll inspects billing's lock: %s", stderr)
	assert.Contains(t, stderr, "needs read permission on "+shared+"/billing/job")
	stop(holder)

	private := root + "/private"
	holder = as(command(t, "--acl", "creator", "--parent-acl", "creator", "lock", private+"/billing/job", "--", "sleep", "60"), billing)
	require.NoError(t, holder.Start())
	defer stop(holder)
	waitNodes(t, super, private+"/billing/job", 1)
	acl, _, err := super.GetACL(private)
	require.NoError(t, err)
	assert.Equal(t, []zk.ACL{{Perms: zk.PermAll, Scheme: "digest", ID: acl[0].ID}}, acl, "--parent-acl creator")
	code, stderr = runAs(t, payroll, "--acl", "creator", "lock", private+"/payroll/job", "-n", "--connect-timeout", "30s", "--", "true")
	assert.Equal(t, 77, code, "payroll locks beside billing's private parent: %s", stderr)
	assert.Contains(t, stderr, "needs create permission on "+private+"\n")
	assert.Contains(t, stderr, "The nodes' ACL does not let this identity in: authenticate with --auth")

	bad := command(t, "lock", root+"/bad", "--", "true")
	bad.Env = append(os.Environ(), "ZKRECIPES_PARENT_ACL=world:anyone:x")
	out, err := bad.CombinedOutput()
	assert.Equal(t, 64, bad.ProcessState.ExitCode(), "%s (%v)", out, err)
	assert.Contains(t, string(out), "$ZKRECIPES_PARENT_ACL")
}
