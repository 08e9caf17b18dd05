// Package bench_test measures the lock recipes against the raw go-zookeeper
// floor and against go-zookeeper's own zk.Lock, side by side on one ZooKeeper
// server in one run. See README.md for how to run it and what to look for.
//
// Every client, the Java peer's included, reaches ZooKeeper through a
// testenv.Proxy, which counts requests, round trips and watch notifications on
// the wire the same way for all of them, and costs all of them the same extra
// hop. With ZKBENCH_DELAY set (say to 250us) every proxy also delays each
// packet by that much in each direction, as a network would.
package bench_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/seqnode"
	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/locks"
	"github.com/zkrecipes/recipes/zktest"
)

// TestMain starts the shared ZooKeeper server (unless ZK_SERVERS is set),
// warms it up when benchmarks are to run, stops it afterwards, and checks
// that no goroutine outlives the benchmarks. Run with leaderEnv set, the
// binary is instead the leader that BenchmarkFailover kills.
func TestMain(m *testing.M) {
	if path := os.Getenv(leaderEnv); path != "" {
		os.Exit(runFailoverLeader(path)) // BenchmarkFailover's child
	}
	flag.Parse()
	d, err := delayFromEnv()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(2)
	}
	netDelay = d
	goleak.VerifyTestMain(zktest.WithServer(warmedUp{m}))
}

// passEnv names the environment variable that numbers the pass of a run of
// several (make bench sets it): runInTurn starts each pass's sub-benchmarks
// at a different one.
const passEnv = "ZKBENCH_PASS"

// A sub is one sub-benchmark for runInTurn.
type sub struct {
	name string
	f    func(*testing.B)
}

// runInTurn runs subs, the pass numbered by passEnv starting with sub
// (pass mod len(subs)) and going round, so that over as many passes as
// there are subs each comes first once: the first sub-benchmark of a pass
// tends to do somewhat worse, and its ratios to the others with it.
func runInTurn(b *testing.B, subs ...sub) {
	pass, _ := strconv.Atoi(os.Getenv(passEnv)) // unset: 0, the order given
	for i := range subs {
		s := subs[(pass+i)%len(subs)]
		b.Run(s.name, s.f)
	}
}

// delayEnv names the environment variable that sets the one-way delay of
// every proxy, as a Go duration ("250us"); unset or 0, clients and server
// talk over loopback.
const delayEnv = "ZKBENCH_DELAY"

// netDelay is the one-way delay newProxy gives each proxy, from delayEnv.
var netDelay time.Duration

func delayFromEnv() (time.Duration, error) {
	v := os.Getenv(delayEnv)
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s=%q: want a duration such as 250us", delayEnv, v)
	}
	return d, nil
}

// warmUpTime is how long the server is exercised before the benchmarks.
const warmUpTime = 2 * time.Second

// warmedUp runs the benchmarks after warming the server up, so that the
// first benchmark does not pay for the JVM compiling ZooKeeper's request
// path. Without -bench it starts nothing.
type warmedUp struct{ m *testing.M }

// Run warms the server up if -bench was given, then runs the benchmarks.
// It first prints the delay as a configuration line ("delay: 250µs"), which
// benchstat and bench/ratio use to keep the results of the two modes apart.
func (w warmedUp) Run() int {
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		if os.Getenv(zktest.ServersEnv) == "" {
			// A server that syncs its log to disk before it acknowledges a
			// write, and reaps empty containers once a minute, as a
			// production one does. The tests' server does neither: it
			// reaps them every 100 ms, which would have the recipes make
			// their directories again whenever one was empty for a moment.
			s, err := testenv.Start(testenv.WithConfig("forceSync", "yes"), testenv.WithSystemProperty("zookeeper.forceSync", "yes"),
				testenv.WithSystemProperty("znode.container.checkIntervalMs", "60000"))
			if err != nil {
				fmt.Fprintf(os.Stderr, "bench: start ZooKeeper: %v\n", err)
				return 1
			}
			defer s.Close()
			os.Setenv(zktest.ServersEnv, strings.Join(s.Servers(), ","))
		}
		fmt.Printf("delay: %v\n", netDelay)
		if err := warmUp(warmUpTime); err != nil {
			fmt.Fprintf(os.Stderr, "bench: warm-up: %v\n", err)
		}
	}
	return w.m.Run()
}

// warmUp makes, watches, lists and deletes sequential nodes for d, with the
// requests the locks send (a release's marking multi and a mark's watch
// among them), and removes what it made.
func warmUp(d time.Duration) error {
	servers := strings.Split(os.Getenv(zktest.ServersEnv), ",")
	ctx, cancel := context.WithTimeout(context.Background(), connectWait)
	defer cancel()
	sess, err := recipes.Connect(ctx, servers)
	if err != nil {
		return err
	}
	defer sess.Close()
	conn := sess.Conn()
	if _, err := conn.Create(zktest.TestRoot, nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return err
	}
	dir := zktest.TestRoot + "/bench-warm-up-" + uuid()
	if _, err := conn.Create(dir, nil, 0, acl); err != nil {
		return err
	}
	defer func() { _ = zktest.DeleteTree(conn, dir) }()
	for end := time.Now().Add(d); time.Now().Before(end); {
		node, err := conn.Create(dir+"/_c_"+uuid()+"-lock-", nil, zk.FlagEphemeralSequential, acl)
		if err != nil {
			return err
		}
		mark := seqnode.MarkOf(node)
		if _, _, _, err := conn.GetW(node); err != nil {
			return err
		}
		if _, _, _, err := conn.ExistsW(mark); err != nil {
			return err
		}
		if _, _, err := conn.Children(dir); err != nil {
			return err
		}
		if _, err := conn.Multi(
			&zk.CreateRequest{Path: mark, Acl: acl, Flags: zk.FlagEphemeral},
			&zk.DeleteRequest{Path: mark, Version: -1},
			&zk.DeleteRequest{Path: node, Version: -1}); err != nil {
			return err
		}
	}
	return nil
}

// servers returns the benchmarks' server, which Run starts unless
// ZK_SERVERS names one, reached directly: zktest.Servers would put its
// forwarder in every round trip measured. Without -bench, Run starts none,
// and the shared test server is used.
func servers(b testing.TB) []string {
	b.Helper()
	if env := os.Getenv(zktest.ServersEnv); env != "" {
		return strings.Split(env, ",")
	}
	return zktest.Servers(b)
}

// connectWait bounds how long a session may take to be established.
const connectWait = 30 * time.Second

// acl is the ACL every node made by the benchmarks gets.
var acl = zk.WorldACL(zk.PermAll)

// newRoot returns an admin connection and a fresh root path for b, checked
// for leftover ephemeral nodes when b ends. Call it before opening
// sessions, so that they are closed (and their ephemeral nodes gone) before
// the check. The benchmarks' server reaps containers only once a minute:
// empty nodes are deleted before the check (deleteEmpty), which
// therefore cannot see a persistent node left behind; the tests look for
// those.
func newRoot(b *testing.B) (*zk.Conn, string) {
	b.Helper()
	admin := zktest.Connect(b, servers(b))
	root := zktest.Root(b, admin)
	b.Cleanup(func() {
		if err := deleteEmpty(b, admin, root); err != nil {
			b.Errorf("delete the empty nodes under %s: %v", root, err)
		}
	})
	return admin, root
}

// removeAtEnd deletes path and everything under it when b ends, before the
// leftover check of newRoot. It is for persistent nodes the benchmark makes
// on purpose: the floor's directory and the nodes zk.Lock creates.
func removeAtEnd(b *testing.B, admin *zk.Conn, path string) {
	b.Helper()
	b.Cleanup(func() {
		if err := zktest.DeleteTree(admin, path); err != nil {
			b.Errorf("delete %s: %v", path, err)
		}
	})
}

// newProxy starts a proxy to the shared server, delaying packets by
// ZKBENCH_DELAY, and closes it when b ends. Start it before connecting
// through it, so that the connections close first.
func newProxy(b *testing.B) *testenv.Proxy {
	b.Helper()
	p := testenv.ProxyTo(b, servers(b)[0])
	p.SetDelay(netDelay)
	return p
}

// connect opens a session through p, whose Traffic counts it, closed when b
// ends.
func connect(b *testing.B, p *testenv.Proxy) *recipes.Session {
	b.Helper()
	return connectWith(b, recipes.WithDialer(p.Dialer))
}

// connectWith opens a session to the servers with opts, closed when b ends.
func connectWith(b *testing.B, opts ...recipes.Option) *recipes.Session {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), connectWait)
	defer cancel()
	sess, err := recipes.Connect(ctx, servers(b), opts...)
	if err != nil {
		b.Fatalf("connect: %v", err)
	}
	b.Cleanup(func() { _ = sess.Close() })
	return sess
}

// newMutex returns a locks.Mutex on path in sess, failing b if it cannot.
func newMutex(b *testing.B, sess *recipes.Session, path string) *locks.Mutex {
	b.Helper()
	m, err := locks.NewMutex(sess, path)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// ensurePersistent creates path and its missing ancestors as persistent
// nodes.
func ensurePersistent(b *testing.B, conn *zk.Conn, path string) {
	b.Helper()
	for i := 1; i <= len(path); i++ {
		if i < len(path) && path[i] != '/' {
			continue
		}
		_, err := conn.Create(path[:i], nil, 0, acl)
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			b.Fatalf("create %s: %v", path[:i], err)
		}
	}
}

// reportTraffic reports the requests, round trips (see
// testenv.Traffic.RoundTrips) and watch notifications of d per op, over n
// ops.
func reportTraffic(b *testing.B, n int, d testenv.Traffic) {
	b.Helper()
	if n <= 0 {
		return
	}
	b.ReportMetric(float64(d.Requests)/float64(n), "reqs/op")
	b.ReportMetric(float64(d.RoundTrips)/float64(n), "rtts/op")
	b.ReportMetric(float64(d.WatchEvents)/float64(n), "watches/op")
}

// uuid returns a random version-4 UUID in its 36-character text form, as the
// protected node names of Curator (and of our Mutex) carry.
func uuid() string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	h := hex.EncodeToString(u[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// deleteEmpty deletes every node under root (root included) that has no
// children and no ephemeral owner, deepest first, so that a parent left
// childless goes too: what the server's reaping of containers does, for the
// benchmarks' server, which reaps them too seldom for a benchmark to wait
// (once a minute, ZooKeeper's default). It cannot tell a container from an
// empty persistent node, so it deletes those too.
func deleteEmpty(b *testing.B, conn *zk.Conn, root string) error {
	paths := append([]string{root}, zktest.Tree(b, conn, root)...)
	for i := len(paths) - 1; i >= 0; i-- { // children after their parents in paths
		ok, st, err := conn.Exists(paths[i])
		switch {
		case err != nil:
			return fmt.Errorf("exists %s: %w", paths[i], err)
		case !ok || st.NumChildren > 0 || st.EphemeralOwner != 0:
			continue
		}
		if err := conn.Delete(paths[i], st.Version); err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrNotEmpty) {
			return fmt.Errorf("delete %s: %w", paths[i], err)
		}
	}
	return nil
}
