package testenv

import (
	"fmt"
	"os"
	"strings"

	"github.com/zkrecipes/recipes/internal/zkserver"
	"github.com/zkrecipes/recipes/zktest"
)

// Server, Ensemble, their options and the raw proxy come from zkserver,
// for the benchmarks, which run their own servers with options of their
// own and reach them with no forwarder in between; tests use zktest's.
type (
	Server   = zkserver.Server
	Ensemble = zkserver.Ensemble
	Option   = zkserver.Option
	TCPProxy = zkserver.TCPProxy
)

var (
	Start              = zkserver.Start
	StartEnsemble      = zkserver.StartEnsemble
	WithConfig         = zkserver.WithConfig
	WithSystemProperty = zkserver.WithSystemProperty
	NewTCPProxy        = zkserver.NewTCPProxy
	FourLetterWord     = zkserver.FourLetterWord
)

// ForExamples is zktest.WithServer for a package whose examples read
// ZK_SERVERS, as a user's program would: it sets it to the shared servers
// (starting one unless it names some), so that the examples read as code
// to paste. A server that cannot start ends the process.
//
//	func TestMain(m *testing.M) {
//		goleak.VerifyTestMain(testenv.ForExamples(m))
//	}
func ForExamples(m zktest.TestingM) zktest.TestingM {
	servers, err := zktest.Shared()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(zktest.ServersEnv, strings.Join(servers, ","))
	return zktest.WithServer(m)
}
