package zktest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestRoot is the parent of every path Root returns.
const TestRoot = "/zktest"

// containerGrace bounds how long Leftovers waits for the server to reap a
// probed container. This package's servers reap containers every 100 ms; a
// server of ZK_SERVERS must be started with a similarly short
// -Dznode.container.checkIntervalMs, or its containers are reported.
const containerGrace = 2 * time.Second

// Root returns a path of tb's own under TestRoot: its name with a random
// suffix. Root creates TestRoot but not the path; the code under test
// creates what it needs there.
//
// When the test ends, Root reports with tb.Errorf every ephemeral or
// persistent node left under the path, the path included (containers are
// not reported; see Leftovers), then deletes what is left, as the super
// user. Cleanups run last in, first out: a session whose ephemeral nodes
// may remain until it closes must have its close registered with
// tb.Cleanup after Root is called, so that it is closed before the check.
// A session whose client has gone but whose node the server keeps until
// the session times out (a client a Proxy cut off, which gave up) is
// expired first, as the server would; for a Proxy's clients that needs the
// Proxy made after Root, so that it is closed before the check. conn must still work then: do not
// close it in the test, and do not take it through a Proxy.
func Root(tb testing.TB, conn *zk.Conn) string {
	tb.Helper()
	if _, err := conn.Create(TestRoot, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		tb.Fatalf("zktest: create %s: %v", TestRoot, err)
	}
	root := TestRoot + "/" + sanitize(tb.Name()) + "-" + randomSuffix()
	tb.Cleanup(func() {
		// The super user sees and deletes the nodes of ACL'd recipes too;
		// the test itself ran without its powers.
		if err := superUser(conn); err != nil {
			tb.Errorf("zktest: authenticating as the super user: %v", err)
		}
		left, err := Leftovers(conn, root)
		if err == nil && expireAbandoned(left, conn.SessionID()) {
			left, err = Leftovers(conn, root)
		}
		if err != nil {
			tb.Errorf("zktest: checking %s for leftover nodes: %v", root, err)
		}
		persistent := false
		for _, l := range left {
			tb.Errorf("zktest: leftover node %s", l)
			persistent = persistent || l.EphemeralOwner == 0
		}
		if persistent && os.Getenv(ServersEnv) != "" {
			tb.Errorf("zktest: (a server of %s that reaps containers once a minute, ZooKeeper's default, leaves them to be reported as persistent: start it with -Dznode.container.checkIntervalMs=100)", ServersEnv)
		}
		if err := DeleteTree(conn, root); err != nil {
			tb.Errorf("zktest: deleting %s: %v", root, err)
		}
	})
	return root
}

// reconnectBound bounds how long Root's check waits for its connection to
// come back: a test may have restarted or stopped servers.
const reconnectBound = 3 * SessionTimeout

// superUser authenticates conn as the super user, first waiting for conn
// to have a session again if the test restarted its server.
func superUser(conn *zk.Conn) error {
	deadline := time.Now().Add(reconnectBound)
	for {
		var err error
		if conn.State() == zk.StateHasSession {
			err = conn.AddAuth("digest", []byte(SuperCredentials))
			if err == nil || !errors.Is(err, zk.ErrNoServer) && !errors.Is(err, zk.ErrConnectionClosed) {
				return err
			}
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("no session after %v (%v)", reconnectBound, conn.State())
			}
			return err
		}
		time.Sleep(20 * time.Millisecond) // polling the connection's state
	}
}

// expireAbandoned expires the sessions that own ephemeral nodes of left and
// whose clients have gone, as the server would once their timeout passed
// (a client cut off by a Proxy that gave up, say), except keep's; it
// reports whether it expired any.
func expireAbandoned(left []Leftover, keep int64) bool {
	tried, expired := map[int64]bool{}, false
	for _, l := range left {
		id := l.EphemeralOwner
		if id == 0 || id == keep || tried[id] || !sessions.abandoned(id, closeSeen) {
			continue
		}
		tried[id] = true
		expired = expire(id) == nil || expired
	}
	return expired
}

// closeSeen bounds how long Root's check waits for a front to see the
// close of a connection whose client side has closed. It is spent only on
// a session that still owns nodes and is still connected: a leftover.
const closeSeen = 5 * time.Second

// Leftover is a node that should not have outlived a test.
type Leftover struct {
	Path           string
	EphemeralOwner int64 // 0 for a persistent node, else the owning session
}

// String formats the node with its kind and owner.
func (l Leftover) String() string {
	if l.EphemeralOwner == 0 {
		return l.Path + " (persistent)"
	}
	return fmt.Sprintf("%s (ephemeralOwner=0x%x)", l.Path, uint64(l.EphemeralOwner))
}

// Leftovers returns, sorted by path, the nodes under root (root included)
// that are not containers: every ephemeral node, and every persistent node
// with no leftover below it (a node above a leftover cannot be classified
// without deleting what is below, and that is reported anyway). TTL nodes
// count as persistent. A missing root has none.
//
// The server reports no owner for a container as for a persistent node, so
// containers are told apart by what the server does with them: each
// childless node with no owner is given a child, which is deleted again,
// and a container is then reaped within the server's check interval. What
// is still there after a grace period is persistent. Reaping can leave
// parents childless, so this repeats until nothing changes. Leftovers
// therefore changes the tree (probe children, reaped containers), and takes
// a few hundred milliseconds for each level of containers, or about two
// seconds when it finds persistent nodes.
func Leftovers(conn *zk.Conn, root string) ([]Leftover, error) {
	var out []Leftover
	known := map[string]bool{} // classified as leftovers already
	for {
		var probe []string
		err := walk(conn, root, func(path string, st *zk.Stat) {
			switch {
			case known[path]:
			case st.EphemeralOwner != 0:
				known[path] = true
				out = append(out, Leftover{Path: path, EphemeralOwner: st.EphemeralOwner})
			case st.NumChildren == 0:
				probe = append(probe, path)
			}
		})
		if err != nil {
			return out, err
		}
		if len(probe) == 0 {
			sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
			return out, nil
		}
		left, err := probeContainers(conn, probe)
		if err != nil {
			return out, err
		}
		for _, p := range left {
			known[p] = true
			out = append(out, Leftover{Path: p})
		}
	}
}

// probeContainers gives each path a child and deletes it again, then waits
// until the server has reaped the containers among them. It returns the
// paths still present after containerGrace.
func probeContainers(conn *zk.Conn, paths []string) ([]string, error) {
	name := "/zktest-probe-" + randomSuffix()
	for _, p := range paths {
		_, err := conn.Create(p+name, nil, 0, zk.WorldACL(zk.PermAll))
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return nil, fmt.Errorf("probe %s: %w", p, err)
		}
		if err := conn.Delete(p+name, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return nil, fmt.Errorf("delete probe under %s: %w", p, err)
		}
	}
	deadline := time.Now().Add(containerGrace)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		var left []string
		for _, p := range paths {
			ok, _, err := conn.Exists(p)
			if err != nil {
				return nil, fmt.Errorf("exists %s: %w", p, err)
			}
			if ok {
				left = append(left, p)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left, nil
		}
		paths = left
		<-tick.C
	}
}

// Tree returns the paths of all descendants of root (not root itself) in
// sorted order, failing tb if it cannot list them. A missing root has none.
func Tree(tb testing.TB, conn *zk.Conn, root string) []string {
	tb.Helper()
	var out []string
	err := walk(conn, root, func(path string, _ *zk.Stat) {
		if path != root {
			out = append(out, path)
		}
	})
	if err != nil {
		tb.Fatalf("zktest: listing %s: %v", root, err)
	}
	sort.Strings(out)
	return out
}

// DeleteTree deletes root and all its descendants, deepest first. Nodes that
// disappear concurrently (for example containers reaped by the server) are
// ignored.
func DeleteTree(conn *zk.Conn, root string) error {
	var paths []string
	if err := walk(conn, root, func(path string, _ *zk.Stat) { paths = append(paths, path) }); err != nil {
		return err
	}
	// Deeper paths have more slashes; delete them first.
	sort.SliceStable(paths, func(i, j int) bool {
		return strings.Count(paths[i], "/") > strings.Count(paths[j], "/")
	})
	for _, p := range paths {
		if err := conn.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return fmt.Errorf("delete %s: %w", p, err)
		}
	}
	return nil
}

// walk calls fn for root and every descendant, parents before children.
// Nodes deleted while walking are skipped.
func walk(conn *zk.Conn, root string, fn func(path string, st *zk.Stat)) error {
	children, st, err := conn.Children(root)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("children of %s: %w", root, err)
	}
	fn(root, st)
	sort.Strings(children)
	for _, c := range children {
		p := root + "/" + c
		if root == "/" {
			p = "/" + c
		}
		if err := walk(conn, p, fn); err != nil {
			return err
		}
	}
	return nil
}

// sanitize turns a test name into a single znode name component.
func sanitize(name string) string {
	b := []byte(name)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			b[i] = '_'
		}
	}
	s := string(b)
	if len(s) > 100 {
		s = s[:100]
	}
	if s == "" || s == "." || s == ".." {
		s = "test" + s
	}
	return s
}

func randomSuffix() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
