package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/layout"
	"github.com/zkrecipes/recipes/internal/seqnode"
)

// inspected is one node of a recipe as inspect prints it.
type inspected struct {
	Node    string  `json:"node"`
	Kind    string  `json:"kind"` // lock, read, write, lease
	Data    string  `json:"data"`
	Age     float64 `json:"age_seconds"`
	Token   int64   `json:"fencing_token"`
	Session string  `json:"session"`
}

// inspection is what inspect finds at a path.
type inspection struct {
	Path      string       `json:"path"`
	Type      string       `json:"type"`              // mutex, rwlock, semaphore, barrier, double-barrier, mixed, or none
	Parts     []inspection `json:"parts,omitempty"`   // of a mixed path: each recipe found there
	Members   []inspected  `json:"members,omitempty"` // of a double barrier
	Open      bool         `json:"open,omitempty"`    // a double barrier's ready node exists
	MaxLeases int          `json:"max_leases,omitempty"`
	Holder    *inspected   `json:"holder"` // the first holder, or null
	Holders   []inspected  `json:"holders"`
	Waiters   []inspected  `json:"waiters"`
}

// The layouts inspect knows, by lock name.
var kinds = map[string]string{
	layout.MutexLockName: "lock",
	layout.ReadLockName:  "read",
	layout.WriteLockName: "write",
	layout.LeaseLockName: "lease",
}

func inspectCommand(g globals, args []string, stdout io.Writer) error {
	fs := newFlagSet("inspect", &g)
	asJSON := fs.Bool("json", false, "")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("inspect: want exactly one PATH, got %d", len(pos))
	}
	if err := recipes.ValidatePath(pos[0]); err != nil {
		return usagef("inspect: %v", err)
	}
	ctx, sess, done, err := quickSession(g)
	if err != nil {
		return err
	}
	defer done()
	in, err := describe(ctx, sess, pos[0])
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(in)
	}
	printInspection(stdout, in)
	return nil
}

func printInspection(w io.Writer, in inspection) {
	switch in.Type {
	case "mixed":
		kinds := make([]string, len(in.Parts))
		for i, part := range in.Parts {
			kinds[i] = part.Type
		}
		fmt.Fprintf(w, "%s: mixed: used by %s at once, which do not exclude each other\n", in.Path, strings.Join(kinds, " and "))
		for _, part := range in.Parts {
			var b strings.Builder
			printInspection(&b, part)
			for line := range strings.Lines(b.String()) {
				fmt.Fprint(w, "  "+line)
			}
		}
		return
	case "barrier":
		fmt.Fprintf(w, "%s: barrier, up\n", in.Path)
		return
	case "double-barrier":
		state := "closed"
		if in.Open {
			state = "open"
		}
		fmt.Fprintf(w, "%s: double barrier, %s, %d members\n", in.Path, state, len(in.Members))
		for _, m := range in.Members {
			fmt.Fprintf(w, "  member  %s, for %.1fs  %s\n", dataLabel([]byte(m.Data)), m.Age, m.Node)
		}
		return
	}
	if in.Holder == nil {
		fmt.Fprintf(w, "%s: free (%s)\n", in.Path, in.Type)
		return
	}
	what := in.Type
	if in.MaxLeases > 0 {
		what = fmt.Sprintf("%s, %d leases", in.Type, in.MaxLeases)
	}
	fmt.Fprintf(w, "%s: %s, held by %s, queued %.1fs ago (fencing token %d)\n",
		in.Path, what, dataLabel([]byte(in.Holder.Data)), in.Holder.Age, in.Holder.Token)
	for _, h := range in.Holders {
		fmt.Fprintf(w, "  holder  %-5s %s  %s\n", h.Kind, dataLabel([]byte(h.Data)), h.Node)
	}
	for i, h := range in.Waiters {
		fmt.Fprintf(w, "  waiter %d %-5s %s, waiting %.1fs  %s\n", i+1, h.Kind, dataLabel([]byte(h.Data)), h.Age, h.Node)
	}
}

// describe reads the recipe at p, whichever of Curator's layouts it has. A
// path that several recipes use at once (which do not exclude each other)
// is "mixed": each one's own description is in Parts, and the top level
// lists all their holders and waiters.
func describe(ctx context.Context, sess *recipes.Session, p string) (inspection, error) {
	in := inspection{Path: p, Type: "none", Holders: []inspected{}, Waiters: []inspected{}}
	var names []string
	var data []byte
	err := sess.Retry(ctx, func(conn *zk.Conn) error {
		var err error
		if names, _, err = conn.Children(p); err != nil {
			return err
		}
		data, _, err = conn.Get(p)
		return err
	})
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return in, nil
	case err != nil:
		return in, fmt.Errorf("inspect %s: %w", p, err)
	}
	kinds := layout.Present(names)
	switch len(kinds) {
	case 0:
		if len(names) == 0 && len(data) > 0 {
			// A barrier is a node with data (who set it) and no
			// children; an empty lock directory has neither.
			in.Type = "barrier"
		}
		return in, nil
	case 1:
		return describeKind(ctx, sess, in, kinds[0], names, data)
	}
	in.Type = "mixed"
	for _, k := range kinds {
		part, err := describeKind(ctx, sess, inspection{Path: p, Holders: []inspected{}, Waiters: []inspected{}}, k, names, data)
		if err != nil {
			return in, err
		}
		in.Parts = append(in.Parts, part)
		in.Holders = append(in.Holders, part.Holders...)
		in.Waiters = append(in.Waiters, part.Waiters...)
	}
	if len(in.Holders) > 0 {
		in.Holder = &in.Holders[0]
	}
	return in, nil
}

// describeKind fills in with what the recipe of kind k has at in.Path, whose
// children are names and data is data.
func describeKind(ctx context.Context, sess *recipes.Session, in inspection, k layout.Kind, names []string, data []byte) (inspection, error) {
	p := in.Path
	in.Type = string(k)
	switch k {
	case layout.Semaphore:
		if n, ok := strings.CutPrefix(string(data), "maxLeases="); ok {
			in.MaxLeases, _ = strconv.Atoi(n)
		}
		leases, err := participants(ctx, sess, p+"/"+layout.SemaphoreDir, layout.LeaseLockName)
		if err != nil {
			return in, err
		}
		gate, err := participants(ctx, sess, p+"/"+layout.SemaphoreGate, layout.MutexLockName)
		if err != nil {
			return in, err
		}
		held := len(leases)
		if in.MaxLeases > 0 {
			held = min(held, in.MaxLeases)
		}
		in.Holders = append(in.Holders, leases[:held]...)
		in.Waiters = append(in.Waiters, leases[held:]...)
		if len(gate) > 1 { // the first at the gate is the waiting lease
			in.Waiters = append(in.Waiters, gate[1:]...)
		}
	case layout.RWLock:
		nodes, err := participants(ctx, sess, p, layout.ReadLockName, layout.WriteLockName)
		if err != nil {
			return in, err
		}
		held := rwHolders(nodes)
		in.Holders, in.Waiters = nodes[:held], append(in.Waiters, nodes[held:]...)
	case layout.DoubleBarrier:
		in.Open = slices.Contains(names, layout.ReadyNode)
		members, err := participants(ctx, sess, p)
		if err != nil {
			return in, err
		}
		in.Members = slices.DeleteFunc(members, func(m inspected) bool { return layout.Of(m.Node) != layout.DoubleBarrier || m.Node == layout.ReadyNode })
		for i := range in.Members {
			in.Members[i].Kind = "member"
		}
	case layout.Mutex:
		nodes, err := participants(ctx, sess, p, layout.MutexLockName)
		if err != nil {
			return in, err
		}
		held := min(1, len(nodes))
		in.Holders, in.Waiters = nodes[:held], append(in.Waiters, nodes[held:]...)
	}
	if len(in.Holders) > 0 {
		in.Holder = &in.Holders[0]
	}
	return in, nil
}

// rwHolders returns how many of a read/write lock's nodes, in queue order,
// hold it: the first writer, or every reader ahead of the first writer. The
// nodes may all be gone by the time they are read.
func rwHolders(nodes []inspected) int {
	if len(nodes) == 0 || nodes[0].Kind == "write" {
		return min(1, len(nodes))
	}
	if w := slices.IndexFunc(nodes, func(n inspected) bool { return n.Kind == "write" }); w >= 0 {
		return w
	}
	return len(nodes)
}

// participants reads the nodes of dir in queue order: those with one of
// lockNames, or every node if none is given.
func participants(ctx context.Context, sess *recipes.Session, dir string, lockNames ...string) ([]inspected, error) {
	ps, err := seqnode.Participants(ctx, sess, dir, lockNames...)
	if err != nil {
		return nil, err
	}
	if len(lockNames) > 0 {
		ps = slices.DeleteFunc(ps, func(q seqnode.Participant) bool { return q.Kind == "" })
	}
	now := time.Now()
	out := make([]inspected, len(ps))
	for i, q := range ps {
		out[i] = inspected{
			Node:    path.Base(q.Path),
			Kind:    kinds[q.Kind],
			Data:    string(q.Data),
			Age:     now.Sub(q.Created).Seconds(),
			Token:   q.Token,
			Session: fmt.Sprintf("%#x", q.Session),
		}
	}
	return out, nil
}
