package args

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
)

type session struct {
	chroot string
	parent []zk.ACL // nil: the nodes' own
}

func (s *session) Chroot() string { return s.chroot }
func (s *session) ACL() []zk.ACL  { return zk.WorldACL(zk.PermAll) }
func (s *session) ParentACL() []zk.ACL {
	if s.parent == nil {
		return s.ACL()
	}
	return s.parent
}

// TestCheckSizesTheParents: the containers made above a path carry the
// parents' ACL, which may be far longer than the nodes' own.
func TestCheckSizesTheParents(t *testing.T) {
	long := zk.ACL{Perms: zk.PermAll, Scheme: "digest", ID: strings.Repeat("x", MaxRequest)}
	sess := &session{parent: []zk.ACL{long}}
	_, err := Check[session, *session, option](sess, "/a/b", nil)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "the create of parent /a") {
		t.Fatalf("a parent's create over the limit: %v", err)
	}
	if _, err := Check[session, *session, option](sess, "/a", nil); err != nil {
		t.Fatalf("a path with no parent to make: %v", err)
	}
}

type option func(*Options)

func withData(data []byte) option { return func(o *Options) { o.SetData(data) } }

func TestCheck(t *testing.T) {
	sess := &session{chroot: "/app"}
	tg, err := Check[session, *session, option](sess, "/a/b", nil)
	if err != nil || string(tg.Data) != string(DefaultData()) || tg.Path != "/a/b" || tg.Dir != "/app/a/b" {
		t.Fatalf("defaults: %+v, %v", tg, err)
	}
	tg, err = Check(sess, "/a", []option{withData([]byte{})})
	if err != nil || tg.Data == nil || len(tg.Data) != 0 {
		t.Fatalf("empty data set on purpose: %q, %v", tg.Data, err)
	}
	given := []byte("mine")
	tg, err = Check(sess, "/a", []option{withData(given)})
	given[0] = 'M'
	if err != nil || string(tg.Data) != "mine" {
		t.Fatalf("data is not a copy: %q, %v", tg.Data, err)
	}
	_, err = Check(sess, "/a", []option(nil), nil, AtLeastOne(0, "a semaphore", "lease"))
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "at least 1 lease") {
		t.Errorf("the recipe's own check is not reported: %v", err)
	}
	_, err = Check(sess, "/a", []option{withData(make([]byte, MaxDataSize+1))}, AtLeastOne(0, "a semaphore", "lease"))
	if !strings.Contains(err.Error(), "MaxDataSize") {
		t.Errorf("the common checks come before the recipe's own: %v", err)
	}
	_, err = Check(sess, "/a", []option{withData(nil), nil})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "nil option") {
		t.Errorf("a nil option: %v", err)
	}
	for _, c := range []struct {
		sess *session
		path string
		data []byte
		want string
	}{
		{nil, "/a", nil, "nil session"},
		{sess, "a", nil, "not absolute"},
		{sess, "/a/", nil, "ends with"},
		{sess, "/a", make([]byte, MaxDataSize+1), "MaxDataSize"},
	} {
		_, err := Check(c.sess, c.path, []option{withData(c.data)})
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check(%q, %d bytes) = %v, want %q wrapping the sentinel", c.path, len(c.data), err, c.want)
		}
	}
}

func TestDefaultDataIsHostAndPid(t *testing.T) {
	host, _ := os.Hostname()
	if got, want := string(DefaultData()), host+":"+strconv.Itoa(os.Getpid()); got != want {
		t.Fatalf("DefaultData() = %q, want %q", got, want)
	}
}

func TestAtLeastOne(t *testing.T) {
	if err := AtLeastOne(1, "a semaphore", "lease"); err != nil {
		t.Fatalf("1 lease refused: %v", err)
	}
	for _, n := range []int{0, -1} {
		err := AtLeastOne(n, "a semaphore", "lease")
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "a semaphore needs at least 1 lease, not "+strconv.Itoa(n)) {
			t.Errorf("AtLeastOne(%d) = %v", n, err)
		}
	}
}
