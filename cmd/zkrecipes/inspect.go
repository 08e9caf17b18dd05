package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/barriers"
	"github.com/zkrecipes/recipes/election"
	"github.com/zkrecipes/recipes/locks"
)

var inspectCmd = command{
	name: "inspect",
	summary: `  inspect PATH [-r] [--json]
        show what is at PATH: each recipe's holders and waiters in queue
        order (and whom each waits for), a barrier, a double barrier's
        members; with -r, every recipe at or below PATH (-r /: all of
        them); exit 1 if PATH does not exist
`,
	usage: inspectUsage,
	run:   inspectCommand,
}

// inspectUsage is inspect's usage, as --help shows it.
const inspectUsage = `usage: zkrecipes inspect PATH [-r] [--json]

Show what is at PATH: each recipe that uses it (mutex, rwlock, semaphore,
barrier, double-barrier, leader-latch), its holders (a latch's leader) and
its waiters in queue order, who each waiter waits for, and how long each
node has been there. A LeaderSelector's election is a mutex. A path that
several recipes use at once is "mixed": they do not exclude each other.

  -r       recursive: show each recipe at PATH and below it, in path order
           (PATH may be a parent no recipe uses itself; / lists every recipe
           but those in ZooKeeper's own /zookeeper). It reads every node
           below PATH but a recipe's own: one request for a node whose
           children are other nodes, a few more for one that may be a
           recipe's path (a leaf, or a parent of a recipe's nodes). A node
           whose ACL keeps this identity out is left out, with a line on
           stderr. Any leaf with data reads as a barrier that is up:
           nothing else tells them apart

  --json   print the same as one JSON object: path, type (one of the recipes,
           "mixed", "none" for a path no recipe uses, or "missing"), parts
           (of a mixed path), holder, holders, waiters, members, open,
           max_leases, data; each node has node, kind (mutex, read, write,
           lease, member, latch), data, holds, waits_for, age_seconds (to the
           millisecond), fencing_token, session, revoke_requested and
           waits_for_own_session.
           With -r: an object with path, recipes (a list of those objects)
           and missing (true if PATH does not exist)

Exit status: 0, or 1 if PATH does not exist (--json still prints the object,
with type "missing"), 64 bad usage, 69 ZooKeeper unavailable.
`

// inspected is one node of a recipe as inspect prints it.
type inspected struct {
	Node     string  `json:"node"`
	Kind     string  `json:"kind"` // mutex, read, write, lease, member, latch
	Data     string  `json:"data"`
	Holds    bool    `json:"holds"`
	WaitsFor string  `json:"waits_for,omitempty"` // the node it waits for, if one
	Age      float64 `json:"age_seconds"`
	Token    int64   `json:"fencing_token"`
	Session  string  `json:"session"`
	Revoked  bool    `json:"revoke_requested,omitempty"`
	age      time.Duration

	// OwnSession: the node it waits for is its own session's, as when a
	// nested Lock was given the outer hold's acquire context, not its
	// Context: it may be waiting for itself.
	OwnSession bool `json:"waits_for_own_session,omitempty"`
}

// inspection is what inspect finds at a path.
type inspection struct {
	Path      string       `json:"path"`
	Type      string       `json:"type"`              // mutex, rwlock, semaphore, barrier, double-barrier, leader-latch, mixed, none or missing
	Parts     []inspection `json:"parts,omitempty"`   // of a mixed path: each recipe found there
	Members   []inspected  `json:"members,omitempty"` // of a double barrier
	Open      bool         `json:"open,omitempty"`    // a double barrier's ready node exists
	Data      string       `json:"data,omitempty"`    // a barrier's data
	MaxLeases int          `json:"max_leases,omitempty"`
	Holder    *inspected   `json:"holder"` // the first holder, or null
	Holders   []inspected  `json:"holders"`
	Waiters   []inspected  `json:"waiters"`
}

func inspectCommand(g globals, _ string, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("inspect", &g)
	asJSON := fs.Bool("json", false, "")
	recursive := fs.Bool("r", false, "")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("inspect: want exactly one PATH, got %d", len(pos))
	}
	switch err := recipes.ValidatePath(pos[0]); {
	case pos[0] == "/" && *recursive:
		// The root holds no recipe, but everything is under it.
	case pos[0] == "/":
		return usagef("inspect: %v; inspect -r / lists every recipe", err)
	case err != nil:
		return usagef("inspect: %v", err)
	}
	ctx, sess, done, err := quickSession(g)
	if err != nil {
		return err
	}
	defer done()
	if *recursive {
		return inspectTree(ctx, sess, pos[0], *asJSON, stdout, stderr)
	}
	in, err := describe(ctx, sess, pos[0])
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(in); err != nil {
			return err
		}
	} else {
		printInspection(stdout, in)
	}
	if in.Type == "missing" {
		return exitError{code: exitNothing}
	}
	return nil
}

func printInspection(w io.Writer, in inspection) {
	switch in.Type {
	case "missing":
		fmt.Fprintf(w, "%s: does not exist\n", in.Path)
		return
	case "none":
		fmt.Fprintf(w, "%s: free (no recipe's nodes under it)\n", in.Path)
		return
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
		fmt.Fprintf(w, "%s: barrier, up, set by %s\n", in.Path, dataLabel([]byte(in.Data), false))
		return
	case "double-barrier":
		state := "closed"
		if in.Open {
			state = "open"
		}
		fmt.Fprintf(w, "%s: double barrier, %s, %s\n", in.Path, state, plural(len(in.Members), "member"))
		for _, m := range in.Members {
			fmt.Fprintf(w, "  member  %s, for %s  %s\n", dataLabel([]byte(m.Data), m.Revoked), m.age, m.Node)
		}
		return
	}
	what := in.Type
	if in.MaxLeases > 0 {
		what = fmt.Sprintf("%s, %s", in.Type, plural(in.MaxLeases, "lease"))
	}
	held := "held by"
	if in.Type == leaderLatch {
		held = "led by"
	}
	if in.Holder == nil {
		fmt.Fprintf(w, "%s: %s, free\n", in.Path, what)
	} else {
		fmt.Fprintf(w, "%s: %s, %s %s for %s (fencing token %d)\n",
			in.Path, what, held, dataLabel([]byte(in.Holder.Data), in.Holder.Revoked), in.Holder.age, in.Holder.Token)
	}
	for _, h := range in.Holders {
		fmt.Fprintf(w, "  holder   %-5s %s, for %s  %s\n", h.Kind, dataLabel([]byte(h.Data), h.Revoked), h.age, h.Node)
	}
	for i, h := range in.Waiters {
		on := ""
		if h.WaitsFor != "" {
			on = " for " + h.WaitsFor
		}
		if h.OwnSession {
			on += " (a node of its own session)"
		}
		fmt.Fprintf(w, "  waiter %d %-5s %s, waiting %s%s  %s\n", i+1, h.Kind, dataLabel([]byte(h.Data), h.Revoked), h.age, on, h.Node)
	}
}

// describe reads what the recipe packages find at p. A path that several
// recipes use at once (which do not exclude each other) is "mixed": each
// one's own description is in Parts, and the top level lists all their
// holders and waiters.
func describe(ctx context.Context, sess *recipes.Session, p string) (inspection, error) {
	in := newInspection(p, "none")
	lockUses, err := locks.Inspect(ctx, sess, p)
	if errors.Is(err, zk.ErrNoNode) {
		in.Type = "missing"
		return in, nil
	}
	if err != nil {
		return in, err
	}
	barrierUses, err := barriers.Inspect(ctx, sess, p)
	if errors.Is(err, zk.ErrNoNode) { // deleted in between
		in.Type = "missing"
		return in, nil
	}
	if err != nil {
		return in, err
	}
	latch, err := election.NewLatch(sess, p, "")
	if err != nil {
		return in, err
	}
	voters, err := latch.Participants(ctx)
	if errors.Is(err, zk.ErrNoNode) {
		in.Type = "missing"
		return in, nil
	}
	if err != nil {
		return in, err
	}
	now := time.Now()
	var parts []inspection
	for _, u := range lockUses {
		part := queued(p, u.Recipe, u.Participants, now)
		part.MaxLeases = u.MaxLeases
		parts = append(parts, part)
	}
	if len(voters) > 0 {
		parts = append(parts, queued(p, leaderLatch, voters, now))
	}
	for _, u := range barrierUses {
		part := newInspection(p, u.Recipe)
		part.Open, part.Data = u.Open, string(u.Data)
		for _, q := range u.Members {
			part.Members = append(part.Members, node(q, now))
		}
		parts = append(parts, part)
	}
	for i := range parts {
		if len(parts[i].Holders) > 0 {
			parts[i].Holder = &parts[i].Holders[0]
		}
	}
	switch len(parts) {
	case 0:
		return in, nil
	case 1:
		return parts[0], nil
	}
	in.Type, in.Parts = "mixed", parts
	for _, part := range parts {
		in.Holders = append(in.Holders, part.Holders...)
		in.Waiters = append(in.Waiters, part.Waiters...)
	}
	if len(in.Holders) > 0 {
		in.Holder = &in.Holders[0]
	}
	return in, nil
}

// leaderLatch is inspect's type of an election.Latch's (Curator
// LeaderLatch's) path.
const leaderLatch = "leader-latch"

// queued is the inspection of a recipe whose participants queue: its
// holders and its waiters.
func queued(p, typ string, ps []recipes.Participant, now time.Time) inspection {
	in := newInspection(p, typ)
	owners := make(map[string]int64, len(ps))
	for _, q := range ps {
		owners[q.Path] = q.Session
	}
	for _, q := range ps {
		n := node(q, now)
		n.OwnSession = q.Waits != "" && q.Session != 0 && owners[q.Waits] == q.Session
		if q.Holds {
			in.Holders = append(in.Holders, n)
		} else {
			in.Waiters = append(in.Waiters, n)
		}
	}
	return in
}

func newInspection(p, typ string) inspection {
	return inspection{Path: p, Type: typ, Holders: []inspected{}, Waiters: []inspected{}}
}

// node is q as inspect prints it, its age as of now.
func node(q recipes.Participant, now time.Time) inspected {
	age := max(now.Sub(q.Created), 0).Round(time.Millisecond)
	n := inspected{
		Node:    path.Base(q.Path),
		Kind:    string(q.Kind),
		Data:    string(q.Data),
		Holds:   q.Holds,
		Age:     math.Round(age.Seconds()*1000) / 1000,
		Token:   q.Token,
		Session: fmt.Sprintf("%#x", q.Session),
		Revoked: q.Revoked,
		age:     shortAge(age),
	}
	if q.Waits != "" {
		n.WaitsFor = path.Base(q.Waits)
	}
	return n
}

// shortAge rounds an age for people: 1.5s, 2m3s, 0s.
func shortAge(d time.Duration) time.Duration {
	if d < time.Minute {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

// dataLabel shows node data as text when it is short and printable.
func dataLabel(data []byte, revoked bool) string {
	switch {
	case revoked:
		// Curator's protocol writes the request over the holder's
		// data: who it was is gone.
		return "<unknown> (revocation requested)"
	case len(data) == 0:
		return "(no data)"
	}
	if len(data) > 80 {
		return fmt.Sprintf("(%d bytes)", len(data))
	}
	for _, b := range data {
		if b < 0x20 || b > 0x7e {
			return fmt.Sprintf("%q", data)
		}
	}
	return string(data)
}

// plural is n and the unit, in the plural unless n is 1.
func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
