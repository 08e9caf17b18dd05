package seqnode

import (
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/jute"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// LongestSequence is the longest sequence ZooKeeper appends: "%010d" of an
// int32, which takes a minus sign once the parent's counter has wrapped.
const LongestSequence = "-2147483648"

// anyUUID stands for a UUID: they all have its length.
const anyUUID = "00000000-0000-4000-8000-000000000000"

// Fits checks that every request the engine sends for a node of spec, whose
// nodes carry acl, is one ZooKeeper takes (args.Fits): the create, with its
// data and the name's sequence if the spec gives one; the reads, revocation
// and delete of the node, whose name then has ZooKeeper's sequence, as long as
// it can get; and, if releases are marked, the multi that deletes the node
// with its own mark (a waiter keeps to write no more marks than fit: owe).
// The containers made for the parents are smaller than the create.
func (s Spec) Fits(acl []zk.ACL) error {
	head := ProtectedName(anyUUID, s.Prefix)
	create := zpath.Join(s.Dir, head+s.Sequence)
	what := fmt.Sprintf("the create of a %s node in %s", s.Prefix, args.Short(s.Dir))
	if s.Sequence != "" {
		what += " at sequence " + s.Sequence
	}
	if err := args.Fits(what+fmt.Sprintf(", with %d bytes of data", len(s.Data)), jute.Create(create, len(s.Data), acl)); err != nil {
		return err
	}
	seq := s.Sequence
	if seq == "" {
		seq = LongestSequence
	}
	node := zpath.Join(s.Dir, head+seq)
	size := max(jute.Read(node), jute.Delete(node), jute.SetData(node, len(RevokeData)))
	if s.marks() {
		size = max(size, markedDeleteSize(node, []string{MarkOf(node)}, acl))
	}
	return args.Fits(fmt.Sprintf("a %s node's delete or revocation in %s", s.Prefix, args.Short(s.Dir)), size)
}

// markOps is the multi that deletes the node at path with marks (marks.go).
func markOps(path string, marks []string, acl []zk.ACL) []any {
	ops := make([]any, 0, 2*len(marks)+1)
	for _, m := range marks {
		ops = append(ops,
			&zk.CreateRequest{Path: m, Acl: acl, Flags: zk.FlagEphemeral},
			&zk.DeleteRequest{Path: m, Version: -1})
	}
	return append(ops, &zk.DeleteRequest{Path: path, Version: -1})
}

// markedDeleteSize is the size of markOps' multi.
func markedDeleteSize(path string, marks []string, acl []zk.ACL) int {
	n, _ := jute.Multi(markOps(path, marks, acl)...) // markOps makes only known ops
	return n
}
