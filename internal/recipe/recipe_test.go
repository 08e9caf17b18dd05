package recipe

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/zktest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(zktest.WithServer(m))
}

// session connects to the shared server with opts; it is closed when t
// ends. The checks do no I/O: the session only says its chroot and ACLs.
func session(t *testing.T, opts ...recipes.Option) *recipes.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := recipes.Connect(ctx, zktest.Servers(t), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	return sess
}

// TestCheckSizesTheParents: the containers made above a path carry the
// parents' ACL, which may be far longer than the nodes' own.
func TestCheckSizesTheParents(t *testing.T) {
	long := zk.ACL{Perms: zk.PermAll, Scheme: "digest", ID: strings.Repeat("x", recipes.MaxRequest)}
	sess := session(t, recipes.WithParentACL([]zk.ACL{long}))
	_, err := Check(sess, "/a/b", nil)
	if !errors.Is(err, recipes.ErrInvalid) || !strings.Contains(err.Error(), "the create of parent /a") {
		t.Fatalf("a parent's create over the limit: %v", err)
	}
	if _, err := Check(sess, "/a", nil); err != nil {
		t.Fatalf("a path with no parent to make: %v", err)
	}
}

func TestCheck(t *testing.T) {
	sess := session(t, recipes.WithChroot("/app"))
	tg, err := Check(sess, "/a/b", nil)
	if err != nil || string(tg.Data) != string(args.DefaultData()) || tg.Path != "/a/b" || tg.Dir != "/app/a/b" {
		t.Fatalf("defaults: %+v, %v", tg, err)
	}
	tg, err = Check(sess, "/a", []recipes.NodeOption{recipes.WithData([]byte{})})
	if err != nil || tg.Data == nil || len(tg.Data) != 0 {
		t.Fatalf("empty data set on purpose: %q, %v", tg.Data, err)
	}
	given := []byte("mine")
	tg, err = Check(sess, "/a", []recipes.NodeOption{recipes.WithData(given)})
	given[0] = 'M'
	if err != nil || string(tg.Data) != "mine" {
		t.Fatalf("data is not a copy: %q, %v", tg.Data, err)
	}
	noLeases := func() error { return args.Count(0, "a semaphore", "lease") }
	_, err = Check(sess, "/a", nil, func() error { return nil }, noLeases)
	if !errors.Is(err, recipes.ErrInvalid) || !strings.Contains(err.Error(), "at least 1 lease") {
		t.Errorf("the recipe's own check is not reported: %v", err)
	}
	_, err = Check(sess, "/a", []recipes.NodeOption{recipes.WithData(make([]byte, recipes.MaxDataSize+1))}, noLeases)
	if err == nil || !strings.Contains(err.Error(), "MaxDataSize") {
		t.Errorf("the common checks come before the recipe's own: %v", err)
	}
	_, err = Check(nil, "/a", nil, func() error { t.Error("a recipe's check ran with a nil session"); return nil })
	if !errors.Is(err, recipes.ErrInvalid) {
		t.Errorf("a nil session: %v", err)
	}
	_, err = Check(sess, "/a", []recipes.NodeOption{recipes.WithData(nil), nil})
	if !errors.Is(err, recipes.ErrInvalid) || !strings.Contains(err.Error(), "nil option") {
		t.Errorf("a nil option: %v", err)
	}
	for _, c := range []struct {
		sess *recipes.Session
		path string
		data []byte
		want string
	}{
		{nil, "/a", nil, "nil session"},
		{sess, "a", nil, "not absolute"},
		{sess, "/a/", nil, "ends with"},
		{sess, "/a", make([]byte, recipes.MaxDataSize+1), "MaxDataSize"},
	} {
		_, err := Check(c.sess, c.path, []recipes.NodeOption{recipes.WithData(c.data)})
		if !errors.Is(err, recipes.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check(%q, %d bytes) = %v, want %q wrapping the sentinel", c.path, len(c.data), err, c.want)
		}
	}
}
