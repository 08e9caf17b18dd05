package jute_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/zkrecipes/recipes/internal/jute"
	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/zktest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(zktest.WithServer(m))
}

// wire records the length and opcode of every packet go-zookeeper writes: it
// writes each request whole, with one Write.
type wire struct {
	mu      sync.Mutex
	packets []packet
}

type packet struct {
	op, length int32
	bytes      []byte // the whole packet, length first
}

func (w *wire) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	return &wireConn{Conn: c, w: w}, nil
}

type wireConn struct {
	net.Conn
	w *wire
}

func (c *wireConn) Write(p []byte) (int, error) {
	if len(p) >= 12 && int(binary.BigEndian.Uint32(p))+4 == len(p) {
		c.w.mu.Lock()
		c.w.packets = append(c.w.packets, packet{op: int32(binary.BigEndian.Uint32(p[8:])), length: int32(binary.BigEndian.Uint32(p)), bytes: bytes.Clone(p)})
		c.w.mu.Unlock()
	}
	return c.Conn.Write(p)
}

// last is the length of the last request with opcode op.
func (w *wire) last(t *testing.T, op int32) int {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := len(w.packets) - 1; i >= 0; i-- {
		if w.packets[i].op == op {
			return int(w.packets[i].length)
		}
	}
	t.Fatalf("no request with opcode %d sent", op)
	return 0
}

// TestSizesMatchTheWire: each size is the length go-zookeeper puts on the
// wire for that request, for the requests the recipes send.
func TestSizesMatchTheWire(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	var w wire
	conn := zktest.Connect(t, zktest.Servers(t), zk.WithDialer(w.dial))
	acl := append(zk.WorldACL(zk.PermAll), zk.DigestACL(zk.PermRead, "someone", "secret")...)
	dir := root + "/" + strings.Repeat("d", 300)
	node := dir + "/n"
	check := func(what string, op int32, want int) {
		t.Helper()
		if got := w.last(t, op); got != want {
			t.Errorf("%s: %d bytes on the wire, jute says %d", what, got, want)
		}
	}

	container(t, admin, root)
	if _, err := conn.CreateContainer(dir, nil, zk.FlagContainer, acl); err != nil {
		t.Fatal(err)
	}
	check("create container, nil data", testenv.OpCreateContainer, jute.Create(dir, 0, acl))
	if _, err := conn.Create(node, []byte("some data"), zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	check("create", testenv.OpCreate, jute.Create(node, 9, acl))
	seq, err := conn.Create(node+"-", make([]byte, 1000), zk.FlagEphemeralSequential, acl)
	if err != nil {
		t.Fatal(err)
	}
	check("create sequential", testenv.OpCreate, jute.Create(node+"-", 1000, acl))
	if _, err := conn.Set(seq, []byte("__REVOKE__"), -1); err != nil {
		t.Fatal(err)
	}
	check("set data", testenv.OpSetData, jute.SetData(seq, 10))
	if _, _, err := conn.Get(seq); err != nil {
		t.Fatal(err)
	}
	check("get data", testenv.OpGetData, jute.Read(seq))
	if _, _, _, err := conn.ExistsW(seq); err != nil {
		t.Fatal(err)
	}
	check("exists", testenv.OpExists, jute.Read(seq))
	if _, _, err := conn.Children(dir); err != nil {
		t.Fatal(err)
	}
	check("children", testenv.OpGetChildren2, jute.Read(dir))
	if _, err := conn.Sync(dir); err != nil {
		t.Fatal(err)
	}
	check("sync", testenv.OpSync, jute.Sync(dir))
	ops := []any{
		&zk.CheckVersionRequest{Path: node, Version: -1},
		&zk.CreateRequest{Path: seq + ".mark", Acl: acl, Flags: zk.FlagEphemeral},
		&zk.DeleteRequest{Path: seq + ".mark", Version: -1},
		&zk.SetDataRequest{Path: node, Data: []byte("new"), Version: -1},
		&zk.DeleteRequest{Path: seq, Version: -1},
	}
	if _, err := conn.Multi(ops...); err != nil {
		t.Fatal(err)
	}
	size, err := jute.Multi(ops...)
	if err != nil {
		t.Fatal(err)
	}
	check("multi", testenv.OpMulti, size)
	if err := conn.Delete(node, -1); err != nil {
		t.Fatal(err)
	}
	check("delete", testenv.OpDelete, jute.Delete(node))
	if err := conn.AddAuth("digest", []byte("someone:secret")); err != nil {
		t.Fatal(err)
	}
	check("add auth", testenv.OpSetAuth, jute.SetAuth("digest", len("someone:secret")))
	if err := conn.Delete(dir, -1); err != nil && !errors.Is(err, zk.ErrNoNode) { // or reaped
		t.Fatal(err)
	}
}

// container creates path as a container node, which the leftover check
// allows.
func container(t *testing.T, conn *zk.Conn, path string) {
	t.Helper()
	if _, err := conn.CreateContainer(path, nil, zk.FlagContainer, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
}

// TestMaxRequestIsTheServers: the test server takes a request of exactly
// MaxRequest bytes and drops the connection of one a byte longer; so its
// jute.maxbuffer is ZooKeeper's default, and MaxRequest is that limit.
func TestMaxRequestIsTheServers(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	conn := zktest.Connect(t, zktest.Servers(t))
	acl := zk.WorldACL(zk.PermAll)
	container(t, admin, root)
	node := root + "/n"
	data := jute.MaxRequest - jute.Create(node, 0, acl)
	if _, err := conn.Create(node, make([]byte, data), zk.FlagEphemeral, acl); err != nil {
		t.Fatalf("a request of MaxRequest bytes: %v", err)
	}
	if err := conn.Delete(node, -1); err != nil {
		t.Fatal(err)
	}
	_, err := conn.Create(node, make([]byte, data+1), zk.FlagEphemeral, acl)
	if !errors.Is(err, zk.ErrConnectionClosed) {
		t.Fatalf("a request of MaxRequest+1 bytes: %v, want the connection dropped", err)
	}
	if ok, _, err := admin.Exists(node); err != nil || ok {
		t.Fatalf("after the dropped request: exists %v, %v", ok, err)
	}
}

func TestMultiRefusesWhatItCannotSize(t *testing.T) {
	if _, err := jute.Multi(&zk.CreateRequest{Path: "/a"}, "not an op"); err == nil {
		t.Error("an unknown op was sized")
	}
	if _, err := jute.Multi((*zk.DeleteRequest)(nil)); err == nil {
		t.Error("a nil op was sized")
	}
}

// TestWritePathReadsTheWire: WritePath finds the path in the creates and
// deletes go-zookeeper writes, and the node's in a multi that ends with its
// delete (a marked release), and nothing in the other requests or in a
// multi cut short.
func TestWritePathReadsTheWire(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	container(t, admin, root)
	var w wire
	conn := zktest.Connect(t, zktest.Servers(t), zk.WithDialer(w.dial))
	dir := root + "/d"
	if _, err := conn.CreateContainer(dir, nil, zk.FlagContainer, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	name := dir + "/_c_" + strings.Repeat("u", 36) + "-lock-"
	node, err := conn.Create(name, []byte("data"), zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := conn.Children(dir); err != nil {
		t.Fatal(err)
	}
	if err := conn.Delete(node, -1); err != nil {
		t.Fatal(err)
	}
	// A marked release (seqnode's deleteMarked): the node's delete is last.
	second, err := conn.Create(name, nil, zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatal(err)
	}
	mark := second + ".released"
	if _, err := conn.Multi(
		&zk.CheckVersionRequest{Path: second, Version: -1},
		&zk.SetDataRequest{Path: second, Data: []byte("x"), Version: -1},
		&zk.CreateRequest{Path: mark, Data: []byte("m"), Acl: zk.WorldACL(zk.PermAll)},
		&zk.DeleteRequest{Path: mark, Version: -1},
		&zk.DeleteRequest{Path: second, Version: -1}); err != nil {
		t.Fatal(err)
	}
	// A multi whose last op is not a delete has no path to report.
	if _, err := conn.Multi(
		&zk.CreateRequest{Path: mark, Acl: zk.WorldACL(zk.PermAll)},
		&zk.DeleteRequest{Path: mark, Version: -1},
		&zk.CheckVersionRequest{Path: dir, Version: -1}); err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var writes []string
	for _, p := range w.packets {
		path, ok := jute.WritePath(p.bytes)
		switch {
		case ok:
			writes = append(writes, path)
		case p.op == testenv.OpCreate || p.op == testenv.OpCreateContainer || p.op == testenv.OpDelete:
			t.Errorf("WritePath missed %x", p.bytes)
		}
		for cut := 1; p.op == testenv.OpMulti && cut <= len(p.bytes)-12; cut++ {
			// A multi cut short, its length set to match.
			b := slices.Clone(p.bytes[:len(p.bytes)-cut])
			binary.BigEndian.PutUint32(b, uint32(len(b)-4))
			if _, ok := jute.WritePath(b); ok {
				t.Fatalf("WritePath took a multi cut %d bytes short: %x", cut, b)
			}
		}
		if _, ok := jute.WritePath(p.bytes[:len(p.bytes)-1]); ok {
			t.Errorf("WritePath took a cut packet %x", p.bytes[:len(p.bytes)-1])
		}
	}
	if want := []string{dir, name, node, name, second}; !slices.Equal(writes, want) {
		t.Errorf("creates and deletes on the wire = %q, want %q", writes, want)
	}
}
