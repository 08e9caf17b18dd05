package barriers_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/zkrecipes/recipes/zktest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(zktest.WithServer(m))
}

// zkServers returns the ensemble the examples talk to: a ZooKeeper the test
// harness started on loopback, or the one named by ZK_SERVERS.
func zkServers() []string {
	servers, err := zktest.Shared()
	if err != nil {
		panic(err)
	}
	return servers
}
