package args

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

var errTestInvalid = errors.New("test: invalid")

type session struct{}

type option func(*Options)

func withData(data []byte) option { return func(o *Options) { o.SetData(data) } }

func TestCheck(t *testing.T) {
	sess := new(session) // only its presence is checked
	data, err := Check[session, option](sess, "/a/b", nil, errTestInvalid)
	if err != nil || string(data) != string(DefaultData()) {
		t.Fatalf("defaults: %q, %v", data, err)
	}
	data, err = Check(sess, "/a", []option{withData([]byte{})}, errTestInvalid)
	if err != nil || data == nil || len(data) != 0 {
		t.Fatalf("empty data set on purpose: %q, %v", data, err)
	}
	given := []byte("mine")
	data, err = Check(sess, "/a", []option{withData(given)}, errTestInvalid)
	given[0] = 'M'
	if err != nil || string(data) != "mine" {
		t.Fatalf("data is not a copy: %q, %v", data, err)
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
		_, err := Check(c.sess, c.path, []option{withData(c.data)}, errTestInvalid)
		if !errors.Is(err, errTestInvalid) || !strings.Contains(err.Error(), c.want) {
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
	if err := AtLeastOne(1, "a semaphore", "lease", errTestInvalid); err != nil {
		t.Fatalf("1 lease refused: %v", err)
	}
	for _, n := range []int{0, -1} {
		err := AtLeastOne(n, "a semaphore", "lease", errTestInvalid)
		if !errors.Is(err, errTestInvalid) || !strings.Contains(err.Error(), "a semaphore needs at least 1 lease, not "+strconv.Itoa(n)) {
			t.Errorf("AtLeastOne(%d) = %v", n, err)
		}
	}
}
