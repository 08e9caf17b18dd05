package recipes

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
)

// TestACLsThatSplitPermissionsAreAccepted: the recipes need read, write,
// create and delete from some entry of the ACL, not all from one.
func TestACLsThatSplitPermissionsAreAccepted(t *testing.T) {
	for name, acl := range map[string][]zk.ACL{
		"creator only": CreatorOnly(),
		"open":         OpenACL(),
		"world reads, one identity does the rest": {
			{Perms: zk.PermRead, Scheme: "world", ID: "anyone"},
			{Perms: zk.PermAll, Scheme: "digest", ID: "billing:nq1nKRsMl/3BRJ1yl+gtAp1bT2Q="},
		},
		"split between schemes, no admin": {
			{Perms: zk.PermRead | zk.PermWrite, Scheme: "ip", ID: "10.0.0.0/8"},
			{Perms: zk.PermCreate | zk.PermDelete, Scheme: "x509", ID: "CN=billing"},
		},
	} {
		if err := buildOptions([]Option{WithACL(acl)}).check(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for perm, acl := range map[string][]zk.ACL{
		"write":  {{Perms: zk.PermAll &^ zk.PermWrite, Scheme: "world", ID: "anyone"}},
		"create": {{Perms: zk.PermRead, Scheme: "world", ID: "anyone"}, {Perms: zk.PermDelete | zk.PermWrite, Scheme: "ip", ID: "10.0.0.1"}},
	} {
		err := buildOptions([]Option{WithACL(acl)}).check()
		if err == nil || !strings.Contains(err.Error(), "grants nobody "+perm+" permission") {
			t.Errorf("an ACL without %s: %v", perm, err)
		}
	}
}

// TestNilOptionIsRefused: a nil Option is bad input, not a panic.
func TestNilOptionIsRefused(t *testing.T) {
	err := buildOptions([]Option{WithSessionTimeout(DefaultSessionTimeout), nil}).check()
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "nil Option") {
		t.Errorf("a nil Option: %v", err)
	}
}
