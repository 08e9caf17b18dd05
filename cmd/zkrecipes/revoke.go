package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/locks"
)

var revokeCmd = command{
	name: "revoke",
	summary: `  revoke PATH [NODE]
        ask the holders of the lock at PATH (or the one NODE) to let go
`,
	usage: `usage: zkrecipes revoke PATH [NODE]

Ask the holders of the lock at PATH, or the one NODE (a name under PATH, or
a full path, below the chroot if --servers gives one), to let go, the way
Curator's Revoker does: write __REVOKE__ into the node. Only mutex and
read/write lock nodes can be revoked. A holder that does not listen (not
--revocable, not makeRevocable) keeps its lock; inspect then shows
"revocation requested" in place of its data.

Exit status: 0 when every node was asked; 1 when there is nothing to revoke
(nobody holds, or NODE is gone or is not a mutex or read/write lock node);
64 bad usage; 69 ZooKeeper unavailable.
`,
	run: revokeCommand,
}

// revokeCommand is `revoke PATH [NODE]`: ask the holders of the lock at
// PATH, or the one NODE, to let go. It exits 1 when there is nothing to
// revoke: nobody holds, or a node is gone or is not a lock node.
func revokeCommand(g globals, _ string, args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("revoke", &g)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return usagef("revoke: want PATH and at most one NODE")
	}
	if err := recipes.ValidatePath(pos[0]); err != nil {
		return usagef("revoke: %v", err)
	}
	ctx, sess, done, err := quickSession(g)
	if err != nil {
		return err
	}
	defer done()
	var nodes []string
	if len(pos) == 2 {
		nodes = []string{pos[1]}
	} else {
		in, err := describe(ctx, sess, pos[0])
		if err != nil {
			return err
		}
		for _, h := range in.Holders {
			nodes = append(nodes, h.Node)
		}
		if len(nodes) == 0 {
			return exitError{exitNothing, fmt.Errorf("nobody holds %s", pos[0])}
		}
	}
	var refused []error
	for _, n := range nodes {
		full := n
		if n != "" && n[0] != '/' {
			full = pos[0] + "/" + n
		}
		err := locks.Revoke(ctx, sess, full)
		switch {
		case errors.Is(err, locks.ErrNotRevocable):
			refused = append(refused, err)
			continue
		case err != nil:
			return err
		}
		fmt.Fprintf(stdout, "asked %s to let go\n", full)
	}
	if len(refused) > 0 {
		return exitError{exitNothing, errors.Join(refused...)}
	}
	return nil
}
