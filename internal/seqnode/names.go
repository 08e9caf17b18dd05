package seqnode

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
)

// ProtectedPrefix starts every node Curator creates "with protection": the
// name is "_c_" + a 36-character UUID + "-" + the lock name + the sequence.
const ProtectedPrefix = "_c_"

// protectedHeadLen is len("_c_") + 36 + len("-").
const protectedHeadLen = 40

// NewUUID returns a random (version 4) UUID in the form Java's
// UUID.toString prints: 36 lowercase hex digits and dashes, 8-4-4-4-12.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand.Read panics instead)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], b[10:16])
	return string(s[:])
}

// ProtectedName returns the name to create for a node of lock name prefix
// with the given UUID; ZooKeeper appends the sequence.
func ProtectedName(uuid, prefix string) string {
	return ProtectedPrefix + uuid + "-" + prefix
}

// Node is one child of a lock directory, as parsed from its name.
type Node struct {
	Name   string // the child's name
	Prefix string // the lock name found in it, "" if none
	Seq    int32  // the sequence after the lock name; valid if HasSeq
	HasSeq bool   // false for children that are not lock nodes
}

// UUID returns the UUID of a protected name, or "" if name is not one.
func UUID(name string) string {
	if len(name) <= protectedHeadLen || !strings.HasPrefix(name, ProtectedPrefix) || name[protectedHeadLen-1] != '-' {
		return ""
	}
	return name[len(ProtectedPrefix) : protectedHeadLen-1]
}

// Parse reads a child name. As in Curator, the sequence is what follows the
// last occurrence of any of the lock names (so the "_c_<uuid>-" head and
// anything else before it do not matter). It must be a decimal int32 as
// ZooKeeper prints it: ten zero-padded digits, or a minus sign and digits
// once the parent's counter has wrapped.
func Parse(name string, prefixes ...string) Node {
	n := Node{Name: name}
	at := -1
	for _, p := range prefixes {
		if i := strings.LastIndex(name, p); i >= 0 && (i > at || (i == at && len(p) > len(n.Prefix))) {
			at, n.Prefix = i, p
		}
	}
	if at < 0 {
		return n
	}
	digits := name[at+len(n.Prefix):]
	if len(digits) < 10 || len(digits) > 11 || strings.HasPrefix(digits, "+") {
		return n
	}
	v, err := strconv.ParseInt(digits, 10, 32)
	if err != nil {
		return n
	}
	n.Seq, n.HasSeq = int32(v), true
	return n
}

// SequenceOf returns what ZooKeeper appended to name after the last
// occurrence of prefix: its sequence, as printed. A downgrade's read node
// takes its write node's (Spec.Sequence).
func SequenceOf(name, prefix string) string {
	return name[strings.LastIndex(name, prefix)+len(prefix):]
}

// ParseAll parses every name and returns the nodes in lock order (see Sort).
func ParseAll(names []string, prefixes ...string) []Node {
	nodes := make([]Node, len(names))
	for i, name := range names {
		nodes[i] = Parse(name, prefixes...)
	}
	Sort(nodes)
	return nodes
}

// Sort puts nodes in lock order: by sequence, oldest first, then children
// without a sequence by name. Ties (a downgrade's read node carries its write
// node's sequence) break by name, so every client sees one order.
//
// Sequences are compared as serial numbers (RFC 1982): a node is older if its
// sequence is behind the other's by less than 2^31. So the order stays right
// when the parent's counter wraps from 2147483647 to -2147483648, as long as
// the live nodes span less than 2^31 sequence numbers, which a lock directory
// never comes near. Curator compares the printed digits as strings, which
// agrees everywhere except across the wrap (where Curator itself would put a
// newcomer at the head of the queue).
func Sort(nodes []Node) {
	var anchor int32
	for _, n := range nodes {
		if n.HasSeq {
			anchor = n.Seq
			break
		}
	}
	slices.SortStableFunc(nodes, func(a, b Node) int {
		switch {
		case a.HasSeq && !b.HasSeq:
			return -1
		case !a.HasSeq && b.HasSeq:
			return 1
		case a.HasSeq:
			// Offsets from one anchor are plain int32s, so this is a
			// total order, and it agrees with serial comparison.
			if c := cmp.Compare(a.Seq-anchor, b.Seq-anchor); c != 0 {
				return c
			}
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// Index returns the position of the node called name, or -1.
func Index(nodes []Node, name string) int {
	return slices.IndexFunc(nodes, func(n Node) bool { return n.Name == name })
}
