package seqnode

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
	"golang.org/x/sync/errgroup"

	"github.com/zkrecipes/recipes/internal/znode"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// Participant is one node of a lock directory, as read at one moment.
type Participant struct {
	Path    string    // full path of the node
	Prefix  string    // the lock name in the node's name ("lock-", "__READ__", ...), "" if none
	Data    []byte    // the node's data: by default, who created it
	Created time.Time // when ZooKeeper created it
	Token   int64     // the zxid that created it (the fencing token once it holds)
	Session int64     // the session that owns it (0 if not ephemeral)
	Holds   bool      // the recipe's rule says it holds
	Waits   string    // the full path of the node it waits for, "" if it holds or watches the directory
}

// A Rule returns the predicate that decides for a node, by its lock name,
// whether it holds.
type Rule func(n Node) Predicate

// Decide asks rule whether the i-th node of a listing in lock order holds,
// and if not, the index of the node it waits for (-1 if it holds, or if it
// watches the directory), as that node itself would: with the nodes queued
// up to and including it. Predicates are monotone, so what the nodes behind
// it do never changes the answer.
func Decide(nodes []Node, i int, rule Rule) (holds bool, waits int) {
	n := nodes[i]
	holds, watch := rule(n)(nodes[:i+1], i)
	if holds || watch < 0 || watch >= i {
		return holds, -1
	}
	return false, watch
}

// maxParallelReads bounds the reads Participants keeps in flight.
const maxParallelReads = 32

// Participants lists the nodes in dir that carry one of lockNames (every
// child if none is given), in lock order, with their data. If rule is not
// nil, each node's Holds and Waits come from rule's predicate asked with the
// nodes queued up to and including it: that is the node's own view when it
// last looked, and since predicates are monotone the answer is what the
// recipe itself decides. Nodes that vanish while being read are left out; a
// missing dir has none.
func Participants(ctx context.Context, sess znode.Session, dir string, rule Rule, lockNames ...string) ([]Participant, error) {
	names, err := znode.Children(ctx, sess, dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	nodes := ParseAll(names, lockNames...)
	if len(lockNames) > 0 {
		kept := nodes[:0]
		for _, n := range nodes {
			if n.HasSeq {
				kept = append(kept, n)
			}
		}
		nodes = kept
	}
	out := make([]Participant, len(nodes))
	found := make([]bool, len(nodes))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(maxParallelReads)
	for i, n := range nodes {
		out[i] = Participant{Path: zpath.Join(dir, n.Name), Prefix: n.Prefix}
		if rule != nil {
			var waits int
			if out[i].Holds, waits = Decide(nodes, i, rule); waits >= 0 {
				out[i].Waits = zpath.Join(dir, nodes[waits].Name)
			}
		}
		g.Go(func() error {
			p := out[i].Path
			data, st, err := znode.Get(gctx, sess, p)
			switch {
			case errors.Is(err, zk.ErrNoNode):
				return nil
			case err != nil:
				return fmt.Errorf("read %s: %w", p, err)
			}
			out[i].Data, out[i].Created, out[i].Token, out[i].Session = data, time.UnixMilli(st.Ctime), st.Czxid, st.EphemeralOwner
			found[i] = true
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	kept := out[:0]
	for i, p := range out {
		if found[i] {
			kept = append(kept, p)
		}
	}
	return kept, nil
}
