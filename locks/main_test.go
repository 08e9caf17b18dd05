package locks_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/zkrecipes/recipes/internal/zktest"
)

// TestMain starts ZooKeeper (unless ZK_SERVERS names one) and hands its
// address to the examples through ZK_SERVERS, as a user's program would get
// it, so that they read as code to paste.
func TestMain(m *testing.M) {
	servers, err := zktest.Shared()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(zktest.ServersEnv, strings.Join(servers, ","))
	goleak.VerifyTestMain(zktest.WithServer(m))
}
