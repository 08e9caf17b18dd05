package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/layout"
	"github.com/zkrecipes/recipes/internal/seqnode"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// inspectedTree is what inspect -r finds at and below a path.
type inspectedTree struct {
	Path    string       `json:"path"`
	Missing bool         `json:"missing,omitempty"` // PATH does not exist
	Recipes []inspection `json:"recipes"`           // each path a recipe uses, in path order
}

// inspectTree prints the recipes at and below p (inspect -r).
func inspectTree(ctx context.Context, sess *recipes.Session, p string, asJSON bool, stdout io.Writer) error {
	t := inspectedTree{Path: p, Recipes: []inspection{}}
	found, ok, err := describeTree(ctx, sess, p, false)
	if err != nil {
		return err
	}
	t.Missing, t.Recipes = !ok, append(t.Recipes, found...)
	switch {
	case asJSON:
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(t); err != nil {
			return err
		}
	case t.Missing:
		fmt.Fprintf(stdout, "%s: does not exist\n", p)
	case len(t.Recipes) == 0:
		fmt.Fprintf(stdout, "%s: no recipe at or below it\n", p)
	default:
		for _, in := range t.Recipes {
			printInspection(stdout, in)
		}
	}
	if t.Missing {
		return exitError{code: exitNothing}
	}
	return nil
}

// describeTree returns the recipes at p and below it, in path order, and
// whether p exists. It walks the children that no recipe names (the
// directories above other recipes) and a semaphore's locks and leases (own:
// their nodes are the semaphore's, and not listed again, but a directory
// called so may hold other recipes); it skips the lock and member nodes
// themselves. A node deleted during the walk is left out.
func describeTree(ctx context.Context, sess *recipes.Session, p string, own bool) ([]inspection, bool, error) {
	in, err := describe(ctx, sess, p)
	if err != nil || in.Type == "missing" {
		return nil, false, err
	}
	var found []inspection
	if in.Type != "none" && !own {
		found = append(found, in)
	}
	names, err := childNames(ctx, sess, p)
	if err != nil {
		return nil, false, err
	}
	slices.Sort(names)
	for _, name := range names {
		below := zpath.Join(p, name) // p is never "/", which ValidatePath refuses
		nested := false
		switch {
		case name == layout.SemaphoreGate || name == layout.SemaphoreDir:
			nested = true
		case layout.Of(name) != layout.None || seqnode.Parse(name, layout.LeaseLockName).HasSeq:
			continue // a lock's, lease's or member's node
		}
		sub, _, err := describeTree(ctx, sess, below, nested)
		if err != nil {
			return nil, false, err
		}
		found = append(found, sub...)
	}
	return found, true, nil
}

// childNames lists the children of p, under the session's chroot; none if
// p is gone.
func childNames(ctx context.Context, sess *recipes.Session, p string) ([]string, error) {
	var names []string
	err := sess.Retry(ctx, func(conn *zk.Conn) error {
		var err error
		names, _, err = conn.Children(zpath.Under(sess.Chroot(), p))
		if errors.Is(err, zk.ErrNoNode) {
			names, err = nil, nil
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("inspect %s: %w", p, err)
	}
	return names, nil
}
