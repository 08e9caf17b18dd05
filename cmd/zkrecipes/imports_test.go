package main_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCommandUsesThePublicAPIOnly: zkrecipes is built on what users import
// (recipes, locks, barriers, election), so that whatever it can do, a
// program of theirs can too; its tests may use the internal test harness.
func TestCommandUsesThePublicAPIOnly(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".").Output()
	require.NoError(t, err)
	for imp := range strings.Lines(string(out)) {
		if strings.Contains(imp, "/internal/") || strings.HasSuffix(strings.TrimSpace(imp), "/internal") {
			t.Errorf("zkrecipes imports %s", strings.TrimSpace(imp))
		}
	}
}
