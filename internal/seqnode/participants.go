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
	Kind    string    // the lock name in the node's name ("lock-", "__READ__", ...), "" if none
	Data    []byte    // the node's data: by default, who created it
	Created time.Time // when ZooKeeper created it
	Token   int64     // the zxid that created it (the fencing token once it holds)
	Session int64     // the session that owns it (0 if not ephemeral)
}

// maxParallelReads bounds the reads Participants keeps in flight.
const maxParallelReads = 32

// Participants lists every node in dir in lock order (holders first, then
// waiters in the order they will be served) with its data. Nodes that vanish
// while being read are left out; a missing dir has none.
func Participants(ctx context.Context, sess znode.Session, dir string, siblings ...string) ([]Participant, error) {
	nodes, err := list(ctx, sess, Spec{Dir: dir, Siblings: siblings})
	if err != nil {
		return nil, err
	}
	out := make([]Participant, len(nodes))
	found := make([]bool, len(nodes))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(maxParallelReads)
	for i, n := range nodes {
		g.Go(func() error {
			p := zpath.Join(dir, n.Name)
			data, st, err := znode.Get(gctx, sess, p)
			switch {
			case errors.Is(err, zk.ErrNoNode):
				return nil
			case err != nil:
				return fmt.Errorf("read %s: %w", p, err)
			}
			out[i] = Participant{Path: p, Kind: n.Prefix, Data: data, Created: time.UnixMilli(st.Ctime), Token: st.Czxid, Session: st.EphemeralOwner}
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
