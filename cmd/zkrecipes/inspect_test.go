package main_test

import (
	"encoding/json"
	"errors"
	"math"
	"os/exec"
	"regexp"
	"syscall"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes/zktest"
)

// inspectedNode is a node as `inspect --json` prints it.
type inspectedNode struct {
	Node     string
	Kind     string
	Data     string
	Holds    bool
	WaitsFor string  `json:"waits_for"`
	Age      float64 `json:"age_seconds"`
}

// inspectedPath is what `inspect --json` prints.
type inspectedPath struct {
	Path      string
	Type      string
	Open      bool
	Data      string
	MaxLeases int `json:"max_leases"`
	Holders   []inspectedNode
	Waiters   []inspectedNode
	Members   []inspectedNode
}

// inspectBoth runs inspect on path, as text and as JSON, and checks that
// both succeed.
func inspectBoth(t *testing.T, path string) (string, inspectedPath) {
	t.Helper()
	code, text, stderr := zkrecipes(t, "inspect", path)
	require.Equal(t, 0, code, stderr)
	code, stdout, stderr := zkrecipes(t, "inspect", "--json", path)
	require.Equal(t, 0, code, stderr)
	var in inspectedPath
	require.NoError(t, json.Unmarshal([]byte(stdout), &in), stdout)
	assert.Equal(t, path, in.Path)
	// Ages are for people: 1.5s, not 1.5353279770000001.
	assert.NotRegexp(t, regexp.MustCompile(`\d\.\d{2,}`), text)
	for _, n := range append(append(append([]inspectedNode{}, in.Holders...), in.Waiters...), in.Members...) {
		assert.InDelta(t, n.Age, math.Round(n.Age*1000)/1000, 1e-9, "age_seconds to the millisecond")
	}
	return text, in
}

// emptyLayout makes path, below root, with the given children: empty
// container nodes, as a client that leaves Curator's empty layout behind
// would. They are deleted at the end of the (sub)test.
func emptyLayout(t *testing.T, admin *zk.Conn, root, path string, children ...string) {
	t.Helper()
	nodes := []string{root, path}
	for _, c := range children {
		nodes = append(nodes, path+"/"+c)
	}
	// root may be an empty container left by an earlier subtest, which the
	// server can reap between our creates (the test servers check every
	// 100ms): a missing parent starts the layout again. Once path has a
	// child, nothing on the way to it is empty, and containers that never
	// had a child are not reaped.
	eventually(t, func() bool {
		for _, p := range nodes {
			_, err := admin.CreateContainer(p, nil, zk.FlagContainer, zk.WorldACL(zk.PermAll))
			if errors.Is(err, zk.ErrNoNode) {
				return false
			}
			if !errors.Is(err, zk.ErrNodeExists) {
				require.NoError(t, err)
			}
		}
		return true
	})
	t.Cleanup(func() { assert.NoError(t, zktest.DeleteTree(admin, path)) })
}

// age is how inspect prints an age: 100ms, 1.5s, 2m3s.
const age = `(?:\d+(?:\.\d)?(?:ms|s)|\d+m\d+s)`

// start starts a zkrecipes command in the background, stopped at the end
// of the test.
func start(t *testing.T, args ...string) {
	t.Helper()
	p := command(t, args...)
	require.NoError(t, p.Start())
	t.Cleanup(func() { stop(p) })
}

// TestInspectEveryLayout runs inspect, as text and as JSON, on each layout:
// who holds, who waits for which node, in queue order.
func TestInspectEveryLayout(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)

	t.Run("mutex", func(t *testing.T) {
		path := root + "/mutex"
		start(t, "lock", path, "--data", "first", "--", "sleep", "30")
		waitNodes(t, admin, path, 1)
		start(t, "lock", path, "--data", "second", "--", "sleep", "30")
		waitNodes(t, admin, path, 2)
		text, in := inspectBoth(t, path)
		assert.Equal(t, "mutex", in.Type)
		require.Len(t, in.Holders, 1)
		require.Len(t, in.Waiters, 1)
		h, w := in.Holders[0], in.Waiters[0]
		assert.Equal(t, inspectedNode{Node: h.Node, Kind: "mutex", Data: "first", Holds: true, Age: h.Age}, h)
		assert.Equal(t, inspectedNode{Node: w.Node, Kind: "mutex", Data: "second", WaitsFor: h.Node, Age: w.Age}, w)
		assert.Regexp(t, `^`+regexp.QuoteMeta(path)+`: mutex, held by first for `+age+` \(fencing token \d+\)\n`, text)
		assert.Regexp(t, `waiter 1 mutex second, waiting `+age+` for `+regexp.QuoteMeta(h.Node), text)
	})

	t.Run("rwlock reader behind a writer", func(t *testing.T) {
		path := root + "/rw"
		start(t, "rlock", path, "--data", "reader-1", "--", "sleep", "30")
		waitNodes(t, admin, path, 1)
		start(t, "wlock", path, "--data", "writer", "--", "sleep", "30")
		waitNodes(t, admin, path, 2)
		start(t, "rlock", path, "--data", "reader-2", "--", "sleep", "30")
		waitNodes(t, admin, path, 3)
		text, in := inspectBoth(t, path)
		assert.Equal(t, "rwlock", in.Type)
		require.Len(t, in.Holders, 1)
		require.Len(t, in.Waiters, 2)
		r1, w, r2 := in.Holders[0], in.Waiters[0], in.Waiters[1]
		assert.Equal(t, []string{"read", "write", "read"}, []string{r1.Kind, w.Kind, r2.Kind})
		assert.Equal(t, []string{"reader-1", "writer", "reader-2"}, []string{r1.Data, w.Data, r2.Data})
		assert.Equal(t, r1.Node, w.WaitsFor)
		assert.Equal(t, w.Node, r2.WaitsFor, "a reader waits for the nearest writer ahead")
		assert.Regexp(t, `waiter 2 read  reader-2, waiting `+age+` for `+regexp.QuoteMeta(w.Node), text)
	})

	t.Run("semaphore", func(t *testing.T) {
		path := root + "/sem"
		start(t, "semaphore", path, "--leases", "1", "--data", "lease-1", "--", "sleep", "30")
		waitNodes(t, admin, path+"/leases", 1)
		start(t, "semaphore", path, "--leases", "1", "--data", "lease-2", "--", "sleep", "30")
		waitNodes(t, admin, path+"/leases", 2)
		text, in := inspectBoth(t, path)
		assert.Equal(t, "semaphore", in.Type)
		assert.Equal(t, 1, in.MaxLeases)
		require.Len(t, in.Holders, 1)
		require.Len(t, in.Waiters, 1)
		assert.Equal(t, []string{"lease", "lease-1"}, []string{in.Holders[0].Kind, in.Holders[0].Data})
		assert.Equal(t, []string{"lease", "lease-2"}, []string{in.Waiters[0].Kind, in.Waiters[0].Data})
		assert.Contains(t, text, path+": semaphore, 1 lease, held by lease-1 for ")

		// A third waits at the gate, behind lease-2, which waits for a
		// lease holding the gate.
		start(t, "semaphore", path, "--leases", "1", "--data", "lease-3", "--", "sleep", "30")
		waitNodes(t, admin, path+"/locks", 2)
		text, in = inspectBoth(t, path)
		require.Len(t, in.Holders, 1)
		require.Len(t, in.Waiters, 2)
		h, w1, w2 := in.Holders[0], in.Waiters[0], in.Waiters[1]
		assert.Equal(t, []string{"lease-1", "lease-2", "lease-3"}, []string{h.Data, w1.Data, w2.Data})
		assert.Empty(t, w1.WaitsFor, "a lease waits for any lease, not one node")
		assert.Equal(t, w1.Node, w2.WaitsFor, "the first at the gate waits for the acquirer that waits for a lease")
		assert.Regexp(t, `waiter 2 lease lease-3, waiting `+age+` for `+regexp.QuoteMeta(w1.Node), text)
	})

	t.Run("semaphore mutex", func(t *testing.T) {
		path := root + "/sm"
		start(t, "semaphore-mutex", path, "--data", "only", "--", "sleep", "30")
		waitNodes(t, admin, path+"/leases", 1)
		text, in := inspectBoth(t, path)
		assert.Equal(t, "semaphore", in.Type)
		assert.Equal(t, 1, in.MaxLeases)
		require.Len(t, in.Holders, 1)
		assert.Empty(t, in.Waiters)
		assert.True(t, in.Holders[0].Holds)
		assert.Contains(t, text, "held by only for ")
	})

	t.Run("free semaphore", func(t *testing.T) {
		// Curator's semaphore leaves its empty gate and lease containers.
		path := root + "/free"
		emptyLayout(t, admin, root, path, "locks", "leases")
		text, in := inspectBoth(t, path)
		assert.Equal(t, inspectedPath{Path: path, Type: "semaphore", Holders: []inspectedNode{}, Waiters: []inspectedNode{}}, in)
		assert.Equal(t, path+": semaphore, free\n", text)
	})

	t.Run("a path no recipe uses", func(t *testing.T) {
		path := root + "/plain"
		emptyLayout(t, admin, root, path, "config")
		text, in := inspectBoth(t, path)
		assert.Equal(t, inspectedPath{Path: path, Type: "none", Holders: []inspectedNode{}, Waiters: []inspectedNode{}}, in)
		assert.Equal(t, path+": free (no recipe's nodes under it)\n", text)
	})

	t.Run("open double barrier", func(t *testing.T) {
		path := root + "/db-open"
		members := []*exec.Cmd{
			command(t, "double-barrier", path, "--members", "2", "--data", "m1", "--", "sleep", "30"),
			command(t, "double-barrier", path, "--members", "2", "--data", "m2", "--", "sleep", "30"),
		}
		for _, p := range members {
			require.NoError(t, p.Start())
		}
		t.Cleanup(func() {
			// Both at once: stopped one after the other, the first would
			// wait in Leave for the second until its command ended.
			for _, p := range members {
				_ = p.Process.Signal(syscall.SIGTERM)
			}
			for _, p := range members {
				_ = p.Wait()
			}
		})
		eventually(t, func() bool { ok, _, err := admin.Exists(path + "/ready"); return err == nil && ok })
		text, in := inspectBoth(t, path)
		assert.Equal(t, "double-barrier", in.Type)
		assert.True(t, in.Open)
		require.Len(t, in.Members, 2)
		assert.ElementsMatch(t, []string{"m1", "m2"}, []string{in.Members[0].Data, in.Members[1].Data})
		assert.Contains(t, text, path+": double barrier, open, 2 members\n")
	})

	t.Run("barrier", func(t *testing.T) {
		path := root + "/barrier"
		code, _, stderr := zkrecipes(t, "barrier", "set", path, "--data", "setter")
		require.Equal(t, 0, code, stderr)
		t.Cleanup(func() { _, _, _ = zkrecipes(t, "barrier", "remove", path) })
		text, in := inspectBoth(t, path)
		assert.Equal(t, inspectedPath{Path: path, Type: "barrier", Data: "setter", Holders: []inspectedNode{}, Waiters: []inspectedNode{}}, in)
		assert.Equal(t, path+": barrier, up, set by setter\n", text)
	})

	t.Run("double barrier", func(t *testing.T) {
		path := root + "/db"
		start(t, "double-barrier", path, "--members", "3", "--data", "m1", "--", "true")
		waitNodes(t, admin, path, 1)
		start(t, "double-barrier", path, "--members", "3", "--data", "m2", "--", "true")
		waitNodes(t, admin, path, 2)
		text, in := inspectBoth(t, path)
		assert.Equal(t, "double-barrier", in.Type)
		assert.False(t, in.Open)
		require.Len(t, in.Members, 2)
		assert.Equal(t, []string{"member", "m1", "member", "m2"}, []string{in.Members[0].Kind, in.Members[0].Data, in.Members[1].Kind, in.Members[1].Data})
		assert.Contains(t, text, path+": double barrier, closed, 2 members\n")
		assert.Regexp(t, `member  m1, for `+age+`  `+regexp.QuoteMeta(in.Members[0].Node), text)
	})

	t.Run("missing path", func(t *testing.T) {
		path := root + "/missing"
		code, stdout, stderr := zkrecipes(t, "inspect", path)
		assert.Equal(t, 1, code, stderr)
		assert.Equal(t, path+": does not exist\n", stdout)
		code, stdout, stderr = zkrecipes(t, "inspect", "--json", path)
		assert.Equal(t, 1, code, stderr)
		var in inspectedPath
		require.NoError(t, json.Unmarshal([]byte(stdout), &in), stdout)
		assert.Equal(t, "missing", in.Type)
	})
}
