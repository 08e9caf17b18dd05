package zpath

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestValidate(t *testing.T) {
	for _, ok := range []string{"/a", "/a/b", "/locks/our-lock", "/ünïcode", "/a.b/..c"} {
		assert.NoError(t, Validate(ok), ok)
	}
	for _, bad := range []string{"", "a", "a/b", "/", "/a/", "//a", "/a//b", "/a/./b", "/a/..", "/a\x00b", "/a\x1fb", "/a\u0085", "/a\ufff5", "/\xff"} {
		err := Validate(bad)
		assert.Error(t, err, "%q", bad)
		assert.True(t, errors.Is(err, errBadPath), "%q", bad)
	}
}

func TestAncestorsAndBase(t *testing.T) {
	assert.Equal(t, []string{"/a/b", "/a"}, Ancestors("/a/b/c"))
	assert.Empty(t, Ancestors("/a"))
	assert.Equal(t, "c", Base("/a/b/c"))
	assert.Equal(t, "/a/b", Join("/a", "b"))
}

// TestValidateRefusesReservedTree: /zookeeper belongs to the server (quotas,
// the ensemble's configuration); a name that only starts the same way is fine.
func TestValidateRefusesReservedTree(t *testing.T) {
	for _, bad := range []string{"/zookeeper", "/zookeeper/quota", "/zookeeper/a/b"} {
		err := Validate(bad)
		assert.ErrorIs(t, err, errBadPath, "%q", bad)
		assert.ErrorContains(t, err, "reserved", "%q", bad)
	}
	for _, ok := range []string{"/zookeeperx", "/zookeeper-locks/a", "/a/zookeeper"} {
		assert.NoError(t, Validate(ok), ok)
	}
}

func TestUnderAndOutside(t *testing.T) {
	for _, c := range []struct{ chroot, p, full string }{
		{"", "/a", "/a"},
		{"/app", "/a/b", "/app/a/b"},
	} {
		if got := Under(c.chroot, c.p); got != c.full {
			t.Errorf("Under(%q, %q) = %q, want %q", c.chroot, c.p, got, c.full)
		}
	}
	for _, c := range []struct{ chroot, full, want string }{
		{"", "/a", "/a"},
		{"/app", "/app/a/b", "/a/b"},
		{"/app", "/app", "/"},
		{"/app", "/apple/x", "/apple/x"}, // not below the chroot
		{"/app", "/other", "/other"},
	} {
		if got := Outside(c.chroot, c.full); got != c.want {
			t.Errorf("Outside(%q, %q) = %q, want %q", c.chroot, c.full, got, c.want)
		}
	}
}
