package zktest

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// ServersEnv names the environment variable that, when set to a
// comma-separated list of host:port addresses, makes Shared use those
// servers instead of starting one.
const ServersEnv = "ZK_SERVERS"

var shared struct {
	mu      sync.Mutex
	servers []string
	server  *Server // started by Shared; nil when ZK_SERVERS is used
	err     error
}

// Shared returns the servers shared by the whole test binary. If ZK_SERVERS
// is set it returns that list; otherwise the first call starts one
// standalone server, which RunMain or WithServer stop when the tests finish.
// A start failure is remembered and returned by every later call.
//
// Without RunMain/WithServer the shared server is only killed when the test
// binary exits (through the parent-death signal) and its temporary directory
// is left behind, so use one of them in TestMain.
func Shared() ([]string, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.servers != nil || shared.err != nil {
		return shared.servers, shared.err
	}
	if env := os.Getenv(ServersEnv); strings.TrimSpace(env) != "" {
		for s := range strings.SplitSeq(env, ",") {
			if s = strings.TrimSpace(s); s != "" {
				shared.servers = append(shared.servers, s)
			}
		}
		return shared.servers, nil
	}
	s, err := Start()
	if err != nil {
		shared.err = err
		return nil, err
	}
	shared.server = s
	shared.servers = s.Servers()
	return shared.servers, nil
}

// ServersT returns Shared's servers, failing t if they are unavailable.
func ServersT(t testing.TB) []string {
	t.Helper()
	servers, err := Shared()
	if err != nil {
		t.Fatalf("zktest: shared ZooKeeper unavailable: %v", err)
	}
	return servers
}

// closeShared stops the shared server if Shared started one.
func closeShared() error {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	s := shared.server
	shared.server, shared.servers, shared.err = nil, nil, nil
	if s == nil {
		return nil
	}
	return s.Close()
}

// TestingM is the part of *testing.M that WithServer needs; it matches
// goleak.TestingM.
type TestingM interface {
	Run() int
}

type serverMain struct{ m TestingM }

func (s serverMain) Run() int {
	code := s.m.Run()
	if err := closeShared(); err != nil {
		fmt.Fprintf(os.Stderr, "zktest: closing shared ZooKeeper: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// WithServer wraps m so that Run runs the tests and then stops the shared
// server, if Shared started one. Combine it with goleak so leak checks run
// after the server is gone:
//
//	func TestMain(m *testing.M) {
//		goleak.VerifyTestMain(zktest.WithServer(m))
//	}
func WithServer(m TestingM) TestingM {
	return serverMain{m: m}
}

// ForExamples is WithServer for a package whose examples read ZK_SERVERS,
// as a user's program would: it sets it to the shared servers (starting one
// unless it names some), so that the examples read as code to paste. A
// server that cannot start ends the process.
//
//	func TestMain(m *testing.M) {
//		goleak.VerifyTestMain(zktest.ForExamples(m))
//	}
func ForExamples(m TestingM) TestingM {
	servers, err := Shared()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(ServersEnv, strings.Join(servers, ","))
	return WithServer(m)
}

// RunMain runs the tests of m with a shared server (see Shared), stops the
// server and exits with the tests' exit code. Call it from TestMain:
//
//	func TestMain(m *testing.M) { zktest.RunMain(m) }
func RunMain(m *testing.M) {
	os.Exit(WithServer(m).Run())
}
