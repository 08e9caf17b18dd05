package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
)

// inspectedTree is what inspect -r finds at and below a path.
type inspectedTree struct {
	Path    string       `json:"path"`
	Missing bool         `json:"missing,omitempty"` // PATH does not exist
	Recipes []inspection `json:"recipes"`           // each path a recipe uses, in path order
}

// inspectTree prints the recipes at and below p (inspect -r); p may be the
// root, "/", which holds no recipe itself.
func inspectTree(ctx context.Context, sess *recipes.Session, p string, asJSON bool, stdout, stderr io.Writer) error {
	t := inspectedTree{Path: p, Recipes: []inspection{}}
	found, ok, err := treeWalk{sess, stderr}.describe(ctx, p, false)
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

// The children of a semaphore's path: the directory of its gate's lock
// nodes and that of its leases (Curator's InterProcessSemaphoreV2).
const (
	semaphoreGate   = "locks"
	semaphoreLeases = "leases"
)

// treeWalk is inspect -r's walk of a tree in sess; it tells stderr of the
// nodes it leaves out because their ACL does not let it read them.
type treeWalk struct {
	sess   *recipes.Session
	stderr io.Writer
}

// describe returns the recipes at p and below it, in path order, and
// whether p exists. It lists p's children first, and reads p as a recipe
// only if they show it may be one: a leaf (a barrier, or an empty lock
// directory) or a node with a recipe's nodes under it. A directory whose
// children are all directories costs one read. It walks the children that
// are not the own nodes of the recipes read at p, among them a
// semaphore's gate and leases directories (own: their nodes are the
// semaphore's, and not listed again, but a directory called so may hold
// other recipes). The root is walked but never read as a recipe, and its
// zookeeper child, ZooKeeper's own tree, is left out. A node deleted during
// the walk is left out, and so is one below p that the ACL keeps from this
// identity, with a line on stderr: on a cluster other services' trees may
// well be closed to it.
func (w treeWalk) describe(ctx context.Context, p string, own bool) ([]inspection, bool, error) {
	names, ok, err := childNames(ctx, w.sess, p)
	if err != nil || !ok {
		return nil, false, err
	}
	var found []inspection
	owned := map[string]bool{} // the nodes of the recipes at p
	if p != "/" && !own && mayHoldRecipe(names) {
		in, err := describe(ctx, w.sess, p)
		switch {
		case err != nil:
			return nil, false, err
		case in.Type == "missing":
			return nil, false, nil
		case in.Type != "none":
			found = append(found, in)
			ownNodes(in, owned)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		// A node of a recipe at p read after the listing was gone by
		// then: it is missing below, and left out.
		if owned[name] || own && participantName(name) || p == "/" && name == "zookeeper" {
			continue
		}
		nested := name == semaphoreGate || name == semaphoreLeases
		sub, _, err := w.describe(ctx, path.Join(p, name), nested)
		if notAllowed(err) {
			fmt.Fprintf(w.stderr, "zkrecipes: %v; left out\n", err)
			continue
		}
		if err != nil {
			return nil, false, err
		}
		found = append(found, sub...)
	}
	return found, true, nil
}

// ownNodes adds to owned the names of the nodes that the recipes of in keep
// under its path: their participants', which are ephemeral (a persistent
// node that looks like one, a directory named by a UUID, say, is the
// user's, and may hold recipes), and a double barrier's ready node.
func ownNodes(in inspection, owned map[string]bool) {
	const persistent = "0x0" // a node's session, as inspect shows it, if none owns it
	for _, part := range append([]inspection{in}, in.Parts...) {
		for _, n := range slices.Concat(part.Holders, part.Waiters, part.Members) {
			owned[n.Node] = n.Session != persistent
		}
		if part.Type == "double-barrier" {
			owned["ready"] = true
		}
	}
}

// mayHoldRecipe reports whether a node with these children may be a
// recipe's path: a leaf may be a barrier, and a recipe's path has its
// nodes, or a semaphore's directories, under it.
func mayHoldRecipe(children []string) bool {
	return len(children) == 0 || slices.ContainsFunc(children, func(n string) bool {
		return participantName(n) || n == semaphoreGate || n == semaphoreLeases
	})
}

// childNames lists the children of p, under the session's chroot, and
// reports whether p exists.
func childNames(ctx context.Context, sess *recipes.Session, p string) ([]string, bool, error) {
	full := sess.Chroot() + p
	if p == "/" && sess.Chroot() != "" {
		full = sess.Chroot()
	}
	var names []string
	exists := true
	err := sess.Retry(ctx, func(conn *zk.Conn) error {
		var err error
		names, _, err = conn.Children(full)
		if errors.Is(err, zk.ErrNoNode) {
			names, exists, err = nil, false, nil
		}
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("inspect %s: %w", p, err)
	}
	return names, exists, nil
}
