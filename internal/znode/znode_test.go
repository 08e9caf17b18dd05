package znode

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

var errTestInvalid = errors.New("test: invalid")

func TestCheckArgs(t *testing.T) {
	type session struct{}
	sess := new(session) // only its presence is checked
	data, err := CheckArgs(sess, "/a/b", nil, false, errTestInvalid)
	if err != nil || string(data) != string(DefaultData()) {
		t.Fatalf("defaults: %q, %v", data, err)
	}
	data, err = CheckArgs(sess, "/a", []byte{}, true, errTestInvalid)
	if err != nil || len(data) != 0 {
		t.Fatalf("empty data set on purpose: %q, %v", data, err)
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
		_, err := CheckArgs(c.sess, c.path, c.data, c.data != nil, errTestInvalid)
		if !errors.Is(err, errTestInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckArgs(%q, %d bytes) = %v, want %q wrapping the sentinel", c.path, len(c.data), err, c.want)
		}
	}
}

func TestDefaultDataIsHostAndPid(t *testing.T) {
	host, _ := os.Hostname()
	if got, want := string(DefaultData()), host+":"+strconv.Itoa(os.Getpid()); got != want {
		t.Fatalf("DefaultData() = %q, want %q", got, want)
	}
}
