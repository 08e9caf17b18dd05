package zktest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkrecipes/recipes/internal/zkserver"
)

// ServersEnv names the environment variable that, set to a comma-separated
// list of host:port addresses, makes Shared and Servers use those servers
// instead of starting one. Clients reach them through this package's
// forwarders on 127.0.0.1 (see ExpireSession), so not with TLS. For Root's
// check such a server needs what this package's own have: containers
// reaped often (-Dznode.container.checkIntervalMs=100; at ZooKeeper's
// default of a minute, every container is reported as a leftover), and,
// for the nodes of ACL'd recipes, SuperCredentials as its superDigest.
const ServersEnv = "ZK_SERVERS"

// HomeEnv names the environment variable that points at an Apache ZooKeeper
// binary release to run (see the package documentation).
const HomeEnv = "ZOOKEEPER_HOME"

var shared struct {
	mu      sync.Mutex
	servers []string
	server  *zkserver.Server // started by Shared; nil with ZK_SERVERS
	front   *front
	err     error
}

// Shared returns the servers that the tests of a package share, for code
// with no testing.TB at hand (a TestMain); tests call Servers. With
// ZK_SERVERS set it returns those servers (behind this package's
// forwarders, so that ExpireSession works on them too); otherwise the first
// call starts a standalone server. A start that failed fails every later
// call alike.
//
// Main or WithServer stops the shared server when the tests end. Without
// them, on Linux it is killed when the test binary exits, leaving its
// temporary files behind; elsewhere it runs on.
func Shared() ([]string, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.servers != nil || shared.err != nil {
		return slices.Clone(shared.servers), shared.err
	}
	var targets []string
	if env := os.Getenv(ServersEnv); strings.TrimSpace(env) != "" {
		for s := range strings.SplitSeq(env, ",") {
			if s = strings.TrimSpace(s); s != "" {
				targets = append(targets, s)
			}
		}
		if err := reachable(targets); err != nil {
			shared.err = fmt.Errorf("zktest: %s=%s: %w", ServersEnv, env, err)
			return nil, shared.err
		}
	} else {
		s, err := zkserver.Start()
		if err != nil {
			shared.err = fmt.Errorf("zktest: start the shared ZooKeeper: %w", err)
			return nil, shared.err
		}
		shared.server = s
		targets = []string{s.Addr()}
	}
	f, err := newFront(targets)
	if err != nil {
		shared.err = fmt.Errorf("zktest: %w", err)
		if shared.server != nil {
			_ = shared.server.Close()
			shared.server = nil
		}
		return nil, shared.err
	}
	shared.front = f
	for i := range targets {
		shared.servers = append(shared.servers, f.addr(i))
	}
	return slices.Clone(shared.servers), nil
}

// reachable checks that at least one of servers accepts a connection: a
// forwarder in front of none would have every client fail to authenticate
// instead, with no word of why.
func reachable(servers []string) error {
	var errs []error
	for _, s := range servers {
		c, err := net.DialTimeout("tcp", s, 5*time.Second)
		if err == nil {
			return c.Close()
		}
		errs = append(errs, err)
	}
	return fmt.Errorf("no server answers: %w", errors.Join(errs...))
}

// Servers returns Shared's servers, failing tb if Shared fails.
func Servers(tb testing.TB) []string {
	tb.Helper()
	servers, err := Shared()
	if err != nil {
		tb.Fatal(err)
	}
	return servers
}

// closeShared stops the shared server if Shared started one.
func closeShared() error {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	s, f := shared.server, shared.front
	shared.server, shared.front, shared.servers, shared.err = nil, nil, nil, nil
	if f != nil {
		f.close()
	}
	if s == nil {
		return nil
	}
	return s.Close()
}

// TestingM is the part of *testing.M that WithServer needs; it is
// goleak.TestingM too.
type TestingM interface {
	Run() int
}

type serverMain struct{ m TestingM }

func (s serverMain) Run() int {
	code := s.m.Run()
	if err := closeShared(); err != nil {
		fmt.Fprintf(os.Stderr, "zktest: stop the shared ZooKeeper: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// WithServer wraps m so that Run runs the tests and then stops the shared
// server, if Shared started one. With goleak, wrap it so that the leak
// check runs once the server's goroutines are gone:
//
//	func TestMain(m *testing.M) {
//		goleak.VerifyTestMain(zktest.WithServer(m))
//	}
func WithServer(m TestingM) TestingM {
	return serverMain{m: m}
}

// Main runs the tests of m, stops the shared server and exits with the
// tests' status. Call it from TestMain:
//
//	func TestMain(m *testing.M) { zktest.Main(m) }
func Main(m *testing.M) {
	os.Exit(WithServer(m).Run())
}
