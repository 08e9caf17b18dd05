package locks

import (
	"context"
	"time"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/seqnode"
)

// Participant is one node of a lock (a holder or a waiter), as read at one
// moment.
type Participant struct {
	Path    string    // the node's full path; Revoke takes it
	Data    []byte    // the node's data: by default "host:pid" of its owner
	Created time.Time // when ZooKeeper created it
	Token   int64     // the zxid that created it: its fencing token once it holds
	Session int64     // the ZooKeeper session that owns it
}

// participants reads dir's nodes in queue order, with the lock name of each.
func participants(ctx context.Context, sess *recipes.Session, dir string, lockNames ...string) ([]Participant, []string, error) {
	ps, err := seqnode.Participants(ctx, sess, dir, lockNames...)
	if err != nil {
		return nil, nil, err
	}
	out := make([]Participant, len(ps))
	kinds := make([]string, len(ps))
	for i, p := range ps {
		out[i] = Participant{Path: p.Path, Data: p.Data, Created: p.Created, Token: p.Token, Session: p.Session}
		kinds[i] = p.Kind
	}
	return out, kinds, nil
}
