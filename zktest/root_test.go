package zktest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
)

func TestLeftoversAndDeleteTree(t *testing.T) {
	t.Parallel()
	conn := Connect(t, Servers(t))
	base := TestRoot + "/orphans-" + randomSuffix()
	if _, err := conn.Create(TestRoot, nil, 0, acl); err != nil && err != zk.ErrNodeExists {
		t.Fatal(err)
	}
	mustCreate := func(path string, flags int32) {
		t.Helper()
		var err error
		if flags == zk.FlagContainer {
			_, err = conn.CreateContainer(path, nil, flags, acl)
		} else {
			_, err = conn.Create(path, nil, flags, acl)
		}
		if err != nil {
			t.Fatalf("create %s: %v", path, err)
		}
	}
	mustCreate(base, zk.FlagContainer)
	mustCreate(base+"/c", zk.FlagContainer)
	mustCreate(base+"/c/p", 0)
	mustCreate(base+"/e", zk.FlagEphemeral)

	orphans, err := Leftovers(conn, base)
	if err != nil {
		t.Fatal(err)
	}
	want := []Leftover{
		{Path: base + "/c/p", EphemeralOwner: 0},
		{Path: base + "/e", EphemeralOwner: conn.SessionID()},
	}
	if !slices.Equal(orphans, want) {
		t.Fatalf("Leftovers = %v, want %v", orphans, want)
	}
	if s := want[1].String(); !strings.Contains(s, fmt.Sprintf("0x%x", conn.SessionID())) {
		t.Fatalf("String() = %q lacks the owner", s)
	}
	if got := Tree(t, conn, base); !slices.Equal(got, []string{base + "/c", base + "/c/p", base + "/e"}) {
		t.Fatalf("Tree = %v", got)
	}
	if err := DeleteTree(conn, base); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := conn.Exists(base); err != nil || ok {
		t.Fatalf("base still exists after DeleteTree: %v, %v", ok, err)
	}
	if got := Tree(t, conn, base); got != nil {
		t.Fatalf("Tree of missing node = %v", got)
	}
}

// recordingTB captures errors and cleanups so Root's cleanup can be run
// without failing the real test.
type recordingTB struct {
	testing.TB
	errors   []string
	cleanups []func()
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recordingTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recordingTB) Helper()          {}

func TestRootCleanupReportsLeftovers(t *testing.T) {
	t.Parallel()
	conn := Connect(t, Servers(t))
	rec := &recordingTB{TB: t}
	root := Root(rec, conn)
	if !strings.HasPrefix(root, TestRoot+"/TestRootCleanupReportsLeftovers-") {
		t.Fatalf("root = %q", root)
	}
	if _, err := conn.CreateContainer(root, nil, zk.FlagContainer, acl); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Create(root+"/leftover", nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	if len(rec.cleanups) != 1 {
		t.Fatalf("Root registered %d cleanups", len(rec.cleanups))
	}
	rec.cleanups[0]()
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], root+"/leftover (persistent)") {
		t.Fatalf("errors = %q", rec.errors)
	}
	if ok, _, err := conn.Exists(root); err != nil || ok {
		t.Fatalf("root not deleted by cleanup: %v, %v", ok, err)
	}
}

func TestRootCleanupAcceptsContainers(t *testing.T) {
	t.Parallel()
	conn := Connect(t, Servers(t))
	rec := &recordingTB{TB: t}
	root := Root(rec, conn)
	if _, err := conn.CreateContainer(root, nil, zk.FlagContainer, acl); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.CreateContainer(root+"/c", nil, zk.FlagContainer, acl); err != nil {
		t.Fatal(err)
	}
	rec.cleanups[0]()
	if len(rec.errors) != 0 {
		t.Fatalf("errors = %q", rec.errors)
	}
	if ok, _, err := conn.Exists(root); err != nil || ok {
		t.Fatalf("root not deleted by cleanup: %v, %v", ok, err)
	}
}

func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{
		"TestX/sub case#1": "TestX_sub_case_1",
		"":                 "test",
		"..":               "test..",
		"a.b-c_d":          "a.b-c_d",
	} {
		if got := sanitize(in); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}
