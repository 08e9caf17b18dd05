// Package recipe is what the recipe packages (locks, barriers, election)
// share beyond the engine: the checks of what a constructor is given (a
// session, a path, node options and the recipe's own checks, with the rules
// and words of package args), the node option by which election's recipes
// take a Mutex's lock (As), and the listing of a recipe's participants.
package recipe

import (
	"bytes"
	"context"
	"fmt"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/jute"
	"github.com/zkrecipes/recipes/internal/seqnode"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// As makes a node option that has the Mutex it configures play role r: how
// election's recipes take their lock, as a locks.Mutex on nodes of their
// own. Users cannot name it; they get a Mutex's own role.
func As(r args.Role) recipes.NodeOption {
	return func(o *recipes.NodeOptions) { args.SetRole(o, r) }
}

// Where checks the session and path that everything a recipe package does
// is given: sess must not be nil, and path must be a valid absolute
// ZooKeeper path, short enough, under the session's chroot, to be read and
// deleted (the recipes' checks of what they create come on top: see
// args.Fits). Its errors wrap recipes.ErrInvalid.
func Where(sess *recipes.Session, path string) error {
	if sess == nil {
		return fmt.Errorf("%w: nil session", recipes.ErrInvalid)
	}
	if err := zpath.Validate(path); err != nil {
		return fmt.Errorf("%w: %w", recipes.ErrInvalid, err)
	}
	full := zpath.Under(sess.Chroot(), path)
	return args.Fits("a delete of "+args.Short(full), max(jute.Read(full), jute.Delete(full)))
}

// Check checks what every recipe constructor is given: node options that
// are not nil, a session and a valid path (Where), data within
// recipes.MaxDataSize, then the recipe's own checks, in order, and parents
// that can be created: the first that fails is reported. The Target's data is
// its own copy of what was set, or args.DefaultData. Its errors wrap
// recipes.ErrInvalid.
func Check(sess *recipes.Session, path string, opts []recipes.NodeOption, checks ...func() error) (args.Target, error) {
	var o recipes.NodeOptions
	for _, opt := range opts {
		if opt == nil {
			return args.Target{}, fmt.Errorf("%w: a nil option", recipes.ErrInvalid)
		}
		opt(&o)
	}
	if err := Where(sess, path); err != nil {
		return args.Target{}, err
	}
	data, set := args.Data(&o)
	if set && len(data) > recipes.MaxDataSize {
		return args.Target{}, fmt.Errorf("%w: node data is %d bytes, more than MaxDataSize (%d)", recipes.ErrInvalid, len(data), recipes.MaxDataSize)
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return args.Target{}, err
		}
	}
	t := args.Target{Path: path, Dir: zpath.Under(sess.Chroot(), path), Data: args.DefaultData(), Role: args.RoleOf(&o)}
	// The containers made above the path carry WithParentACL's ACL, which
	// may be longer than the nodes' own: the longest is made with the path's
	// parent's name.
	if up := zpath.Ancestors(t.Dir); len(up) > 0 {
		if err := args.Fits("the create of parent "+args.Short(up[0]), jute.Create(up[0], 0, sess.ParentACL())); err != nil {
			return args.Target{}, err
		}
	}
	if set {
		// A copy, as Curator makes (CURATOR-140): the caller may reuse its
		// buffer, and every node the recipe creates must carry what was given.
		t.Data = bytes.Clone(data)
	}
	return t, nil
}

// Participants lists dir's nodes of lockNames in queue order, as the
// recipes report them: each with the kind kindOf gives its lock name,
// whether it holds by rule and the node it waits for, its paths outside
// the session's chroot, and Revoked if its data asks its holder to let go.
func Participants(ctx context.Context, sess *recipes.Session, dir string, rule seqnode.Rule, kindOf func(lockName string) recipes.Kind, lockNames ...string) ([]recipes.Participant, error) {
	ps, err := seqnode.Participants(ctx, sess, dir, rule, lockNames...)
	if err != nil {
		return nil, err
	}
	out := make([]recipes.Participant, len(ps))
	for i, p := range ps {
		out[i] = recipes.Participant{
			Path: zpath.Outside(sess.Chroot(), p.Path), Kind: kindOf(p.Prefix), Data: p.Data, Created: p.Created,
			Token: p.Token, Session: p.Session, Holds: p.Holds, Revoked: bytes.Equal(p.Data, seqnode.RevokeData),
		}
		if p.Waits != "" {
			out[i].Waits = zpath.Outside(sess.Chroot(), p.Waits)
		}
	}
	return out, nil
}
