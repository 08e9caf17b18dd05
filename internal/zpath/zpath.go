// Package zpath validates and joins ZooKeeper paths the way ZooKeeper and
// Curator's PathUtils do, so that bad input is refused before any request.
package zpath

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// errBadPath is wrapped by every error Validate returns; the recipes wrap
// those in recipes.ErrInvalid.
var errBadPath = errors.New("invalid ZooKeeper path")

// Reserved is the tree ZooKeeper keeps for itself (quotas, the ensemble's
// configuration): no recipe may live in it.
const Reserved = "/zookeeper"

// Validate reports whether p is a path ZooKeeper accepts for a node: absolute,
// not the root, no trailing or doubled '/', no "." or ".." segment, valid
// UTF-8 and none of the characters ZooKeeper forbids. It also refuses
// Reserved and everything under it.
func Validate(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("%w: empty path", errBadPath)
	case p[0] != '/':
		return fmt.Errorf("%w: %q is not absolute (must start with '/')", errBadPath, p)
	case p == "/":
		return fmt.Errorf("%w: the root %q cannot hold a recipe", errBadPath, p)
	case p == Reserved || strings.HasPrefix(p, Reserved+"/"):
		return fmt.Errorf("%w: %q is in ZooKeeper's reserved tree %s", errBadPath, p, Reserved)
	case strings.HasSuffix(p, "/"):
		return fmt.Errorf("%w: %q ends with '/'", errBadPath, p)
	case !utf8.ValidString(p):
		return fmt.Errorf("%w: %q is not valid UTF-8", errBadPath, p)
	}
	for seg := range strings.SplitSeq(p[1:], "/") {
		switch seg {
		case "":
			return fmt.Errorf("%w: %q has an empty segment", errBadPath, p)
		case ".", "..":
			return fmt.Errorf("%w: %q has a relative segment %q", errBadPath, p, seg)
		}
	}
	for i, r := range p {
		if forbidden(r) {
			return fmt.Errorf("%w: %q has forbidden character %U at byte %d", errBadPath, p, r, i)
		}
	}
	return nil
}

// forbidden lists the characters ZooKeeper's PathUtils refuses.
func forbidden(r rune) bool {
	return r == 0 ||
		(r > 0 && r < 0x20) ||
		(r >= 0x7f && r <= 0x9f) ||
		(r >= 0xd800 && r <= 0xf8ff) ||
		(r >= 0xfff0 && r <= 0xffff)
}

// Join returns parent + "/" + child.
func Join(parent, child string) string {
	return parent + "/" + child
}

// Base returns the last segment of p.
func Base(p string) string {
	return p[strings.LastIndexByte(p, '/')+1:]
}

// Ancestors returns p's ancestors below the root, nearest first:
// "/a/b/c" gives "/a/b", "/a".
func Ancestors(p string) []string {
	var out []string
	for i := strings.LastIndexByte(p, '/'); i > 0; i = strings.LastIndexByte(p[:i], '/') {
		out = append(out, p[:i])
	}
	return out
}

// Under returns p as ZooKeeper sees it from a client chrooted at chroot
// ("" for none): the two joined.
func Under(chroot, p string) string { return chroot + p }

// Outside returns full as a client chrooted at chroot sees it: without the
// chroot ("/" for the chroot itself). A path not below chroot is returned
// unchanged.
func Outside(chroot, full string) string {
	if chroot == "" {
		return full
	}
	if rest, ok := strings.CutPrefix(full, chroot); ok && (rest == "" || rest[0] == '/') {
		if rest == "" {
			return "/"
		}
		return rest
	}
	return full
}
