package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes/internal/testenv"
)

// TestTLSFlags: with --tls-ca the command locks over TLS; a CA that did not
// sign the server's certificate is refused with the reason; bad TLS flags
// are usage errors.
func TestTLSFlags(t *testing.T) {
	t.Parallel()
	srv := testenv.StartTLST(t)
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	require.NoError(t, os.WriteFile(ca, srv.CA.PEM, 0o600))
	other := filepath.Join(dir, "other.pem")
	require.NoError(t, os.WriteFile(other, testenv.NewCA(t, "other").PEM, 0o600))
	run := func(args ...string) (int, string) {
		cmd := exec.Command(binary, append([]string{"--servers", srv.SecureAddr, "--session-timeout", "4s"}, args...)...)
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}
	code, out := run("--tls-ca", ca, "lock", "/tls/lock", "--", "true")
	assert.Equal(t, 0, code, out)
	code, out = run("--tls-ca", other, "lock", "/tls/lock", "--timeout", "2s", "--", "true")
	assert.Equal(t, 69, code, out)
	assert.Contains(t, out, "certificate signed by unknown authority")
	for _, args := range [][]string{
		{"--tls-ca", filepath.Join(dir, "missing.pem")},
		{"--tls-ca", filepath.Join(dir)},
		{"--tls-cert", ca},
		{"--tls-cert", ca, "--tls-key", ca},
	} {
		code, out := run(append(args, "lock", "/tls/lock", "--", "true")...)
		assert.Equal(t, 64, code, "%q: %s", args, out)
		assert.Contains(t, out, "--tls-", "%q", args)
	}
}
