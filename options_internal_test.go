package recipes

import (
	"errors"
	"slices"
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

// TestDefaultParentACL: by default the parents get the nodes' ACL with
// world:anyone given create and read besides what it has, so the open ACL
// stays open; WithParentACL replaces it, and is checked.
func TestDefaultParentACL(t *testing.T) {
	cr := int32(zk.PermCreate | zk.PermRead)
	digest := zk.ACL{Perms: zk.PermAll, Scheme: "digest", ID: "billing:nq1nKRsMl/3BRJ1yl+gtAp1bT2Q="}
	for name, c := range map[string]struct {
		opts []Option
		want []zk.ACL
	}{
		"default":      {nil, OpenACL()},
		"open":         {[]Option{WithACL(OpenACL())}, OpenACL()},
		"creator only": {[]Option{WithACL(CreatorOnly())}, append(CreatorOnly(), zk.ACL{Perms: cr, Scheme: "world", ID: "anyone"})},
		"world reads": {
			[]Option{WithACL([]zk.ACL{digest, {Perms: zk.PermRead | zk.PermWrite, Scheme: "world", ID: "anyone"}})},
			[]zk.ACL{digest, {Perms: cr | zk.PermWrite, Scheme: "world", ID: "anyone"}},
		},
		"given": {[]Option{WithACL(OpenACL()), WithParentACL(CreatorOnly())}, CreatorOnly()},
	} {
		o := buildOptions(c.opts)
		if got := o.parentACLs(); !slices.Equal(got, c.want) {
			t.Errorf("%s: parent ACL %v, want %v", name, got, c.want)
		}
		if got := o.nodeACL(); len(c.opts) > 0 && !slices.Equal(got, o.acl) {
			t.Errorf("%s: the nodes' ACL changed to %v", name, got)
		}
	}
	for why, acl := range map[string][]zk.ACL{
		"empty parent ACL":                   {},
		"parent ACL grants nobody create":    {{Perms: zk.PermAll &^ zk.PermCreate, Scheme: "world", ID: "anyone"}},
		"parent ACL world:someone":           {{Perms: zk.PermAll, Scheme: "world", ID: "someone"}},
		"parent ACL entry with no scheme":    {{Perms: zk.PermAll}},
		"parent ACL with unknown permission": {{Perms: 64, Scheme: "world", ID: "anyone"}},
	} {
		if err := buildOptions([]Option{WithParentACL(acl)}).check(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "parent ACL") {
			t.Errorf("%s: %v", why, err)
		}
	}
	if err := buildOptions([]Option{WithParentACL(CreatorOnly())}).checkConnect(); !errors.Is(err, ErrInvalid) {
		t.Errorf("a creator-only parent ACL without an identity: %v", err)
	}
}
