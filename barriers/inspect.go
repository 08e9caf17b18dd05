package barriers

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/layout"
	"github.com/zkrecipes/recipes/internal/recipe"
	"github.com/zkrecipes/recipes/internal/seqnode"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// A Usage is one barrier recipe that [Inspect] found at a path.
type Usage struct {
	Recipe  string                // "barrier" or "double-barrier"
	Open    bool                  // a double barrier's ready node exists
	Data    []byte                // a barrier's data: by default "host:pid" of who set it
	Members []recipes.Participant // a double barrier's members (Kind KindMember), oldest first
}

// Inspect reports which barrier recipes use path: a Barrier that is up (a
// node with data and no children: an empty lock directory has neither), or a
// DoubleBarrier, by its members' and ready node's names (a member's node is
// ephemeral: a persistent node named by a UUID is no member), with its
// members in the order they arrived. A path that locks use has none (see
// locks.Inspect). A path that does not exist is an error wrapping
// zk.ErrNoNode: no Barrier is up there.
func Inspect(ctx context.Context, sess *recipes.Session, path string) ([]Usage, error) {
	if err := args.Context(ctx, "barriers: Inspect"); err != nil {
		return nil, err
	}
	names, data, err := layout.Read(ctx, sess, path, recipe.Where(sess, path))
	if err != nil {
		return nil, fmt.Errorf("barriers: %w", err)
	}
	if len(names) == 0 {
		if len(data) == 0 {
			return nil, nil
		}
		return []Usage{{Recipe: string(layout.Barrier), Data: data}}, nil
	}
	if !slices.Contains(layout.Present(names), layout.DoubleBarrier) {
		return nil, nil
	}
	ps, err := seqnode.Participants(ctx, sess, zpath.Under(sess.Chroot(), path), nil)
	if err != nil {
		return nil, fmt.Errorf("barriers: inspect %s: %w", path, err)
	}
	u := Usage{Recipe: string(layout.DoubleBarrier), Open: slices.Contains(names, readyNode)}
	for _, p := range ps {
		// A member's node is ephemeral: a persistent one named so (a
		// directory named by a UUID) is not one.
		if name := zpath.Base(p.Path); name == readyNode || !layout.UUIDShaped(name) || p.Session == 0 {
			continue
		}
		u.Members = append(u.Members, recipes.Participant{
			Path: zpath.Outside(sess.Chroot(), p.Path), Kind: recipes.KindMember, Data: p.Data, Created: p.Created, Token: p.Token, Session: p.Session,
		})
	}
	if len(u.Members) == 0 && !u.Open {
		return nil, nil
	}
	slices.SortFunc(u.Members, func(a, b recipes.Participant) int { return cmp.Compare(a.Token, b.Token) })
	return []Usage{u}, nil
}
