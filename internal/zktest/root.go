package zktest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/zkrecipes/recipes/internal/zkserver"

	"github.com/go-zookeeper/zk"
)

// TestRoot is the parent of every path returned by Root.
const TestRoot = "/zkrecipes-test"

// containerGrace bounds how long Orphans waits for the server to reap a
// probed container. The harness's servers check containers every 100ms; an
// external server (ZK_SERVERS) must be started with a similarly short
// -Dznode.container.checkIntervalMs or its containers are reported.
const containerGrace = 2 * time.Second

// Root returns a unique absolute path for t under TestRoot, derived from
// t.Name() plus a random suffix. The node itself is not created (TestRoot
// is); the code under test creates what it needs.
//
// Root registers a cleanup that first reports, with t.Errorf, every node left
// under the path (the path itself included) that is not a container node,
// whether persistent or ephemeral (see Orphans), and then deletes whatever
// remains. Cleanups run last-in first-out, so sessions whose ephemeral nodes
// may legitimately remain until they close must be registered (e.g. with
// Connect) after calling Root; their ephemeral nodes are then gone when the
// check runs. conn must still be usable at cleanup time: do not close it in
// the test, and do not pass a connection that goes through a Proxy.
func Root(t testing.TB, conn *zk.Conn) string {
	t.Helper()
	if _, err := conn.Create(TestRoot, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("zktest: create %s: %v", TestRoot, err)
	}
	root := TestRoot + "/" + sanitize(t.Name()) + "-" + randomSuffix()
	t.Cleanup(func() {
		// The harness's super user sees and deletes the nodes of ACL'd
		// recipes too; the test itself ran without its powers.
		if err := conn.AddAuth("digest", []byte(zkserver.SuperCredentials)); err != nil {
			t.Errorf("zktest: authenticating as the super user: %v", err)
		}
		orphans, err := Orphans(conn, root)
		if err != nil {
			t.Errorf("zktest: checking %s for leftover nodes: %v", root, err)
		}
		for _, o := range orphans {
			t.Errorf("zktest: leftover node %s", o)
		}
		if err := DeleteTree(conn, root); err != nil {
			t.Errorf("zktest: deleting %s: %v", root, err)
		}
	})
	return root
}

// Orphan describes a node that should not have survived a test.
type Orphan struct {
	Path           string
	EphemeralOwner int64 // 0 for a persistent node, else the owning session
}

// String formats the orphan with its kind and owner.
func (o Orphan) String() string {
	if o.EphemeralOwner == 0 {
		return o.Path + " (persistent)"
	}
	return fmt.Sprintf("%s (ephemeralOwner=0x%x)", o.Path, uint64(o.EphemeralOwner))
}

// Orphans returns, sorted by path, the nodes under root (root included) that
// are not container nodes: every ephemeral node, and every persistent node
// without an orphan below it (a node above an orphan cannot be classified
// without deleting the orphan, and the orphan is reported anyway). TTL nodes
// count as persistent. A missing root yields no orphans.
//
// The server reports EphemeralOwner 0 for containers as for persistent
// nodes, so containers are told apart by behaviour: each childless node with
// owner 0 is probed by creating and deleting a child, after which the server
// reaps it within its container check interval if it is a container. What
// is still there after a grace period is persistent. Reaping can make parents
// childless, so this repeats until nothing changes. Orphans therefore
// modifies the tree (probe children, reaped containers) and can take a few
// hundred milliseconds per level of containers, or about two seconds when
// persistent nodes are found.
func Orphans(conn *zk.Conn, root string) ([]Orphan, error) {
	var out []Orphan
	known := map[string]bool{} // classified as orphans already
	for {
		var probe []string
		err := walk(conn, root, func(path string, st *zk.Stat) {
			switch {
			case known[path]:
			case st.EphemeralOwner != 0:
				known[path] = true
				out = append(out, Orphan{Path: path, EphemeralOwner: st.EphemeralOwner})
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
			out = append(out, Orphan{Path: p})
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
// sorted order, failing t on error. A missing root yields nil.
func Tree(t testing.TB, conn *zk.Conn, root string) []string {
	t.Helper()
	var out []string
	err := walk(conn, root, func(path string, _ *zk.Stat) {
		if path != root {
			out = append(out, path)
		}
	})
	if err != nil {
		t.Fatalf("zktest: listing %s: %v", root, err)
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

// DeleteEmpty deletes every node under root (root included) that has no
// children and no ephemeral owner, deepest first, so that a parent left
// childless goes too: what the server's reaping of containers does, for a
// server that reaps them too seldom for a test to wait (ZooKeeper's
// default is once a minute). It cannot tell a container from an empty
// persistent node, so it deletes those too: a test that checks for
// leftover persistent nodes must not use it.
func DeleteEmpty(conn *zk.Conn, root string) error {
	var paths []string
	if err := walk(conn, root, func(path string, _ *zk.Stat) { paths = append(paths, path) }); err != nil {
		return err
	}
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
