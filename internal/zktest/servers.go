package zktest

import (
	"testing"

	"github.com/zkrecipes/recipes/internal/zkserver"
)

// Server, Ensemble and their options come from zkserver; they are here so
// that tests need one import.
type (
	Server   = zkserver.Server
	Ensemble = zkserver.Ensemble
	Option   = zkserver.Option
	TCPProxy = zkserver.TCPProxy
)

var (
	Start              = zkserver.Start
	StartEnsemble      = zkserver.StartEnsemble
	WithStartTimeout   = zkserver.WithStartTimeout
	WithConfig         = zkserver.WithConfig
	WithSystemProperty = zkserver.WithSystemProperty
	WithPeerProxies    = zkserver.WithPeerProxies
	NewTCPProxy        = zkserver.NewTCPProxy
	FourLetterWord     = zkserver.FourLetterWord
	ServerMode         = zkserver.ServerMode
	EnsureInstalled    = zkserver.EnsureInstalled
)

// StartT starts a standalone server like Start, failing t if it cannot, and
// closes the server when t's cleanup runs.
func StartT(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s, err := Start(opts...)
	if err != nil {
		t.Fatalf("zktest: start ZooKeeper: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("zktest: close ZooKeeper: %v", err)
		}
	})
	return s
}

// reportLines is how many lines of each member's log a failed test shows.
const reportLines = 60

// StartEnsembleT starts an ensemble like StartEnsemble, failing t if it
// cannot, and closes it when t's cleanup runs. If t has failed by then, it
// logs each member's state and the end of its log first.
func StartEnsembleT(t testing.TB, n int, opts ...Option) *Ensemble {
	t.Helper()
	e, err := StartEnsemble(n, opts...)
	if err != nil {
		t.Fatalf("zktest: start ZooKeeper ensemble: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			// Cleanups run last in, first out: the test's own have run, and
			// a member that died shows here with its exit status.
			t.Logf("zktest: the ensemble after the failure:\n%s", e.Report(reportLines))
		}
		if err := e.Close(); err != nil {
			t.Errorf("zktest: close ZooKeeper ensemble: %v", err)
		}
	})
	return e
}
