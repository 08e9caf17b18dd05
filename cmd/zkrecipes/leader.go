package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/election"
)

var leaderCmd = command{
	name: "leader",
	summary: `  leader PATH [--watch] [--json]
        print the id of the leader of the election at PATH (a LeaderLatch's
        or a LeaderSelector's); with --watch, then each new leader
`,
	usage: `usage: zkrecipes leader PATH [--watch] [--json] [-q]

Print the id of the participant that leads the election at PATH: a Curator
LeaderLatch's or LeaderSelector's, whether its participants are elect, the
election package or Curator itself. The leader is the first in the queue,
as Curator's getLeader says: it leads, or will as soon as it hears that the
one before it went.

  --watch   print the leader now, then each new one as it takes over, until
            interrupted. While nobody campaigns it says so on stderr. It
            watches the leader's node alone: participants that come and go
            behind the leader cost it nothing. A leader whose whole term
            passed between two looks may not be printed. If the session is
            lost it watches on in a new one.
  --json    print each as a JSON object on a line of its own: path, leader
            (false when nobody campaigns), and the leader's id, node,
            fencing_token, session and age_seconds
  -q        quiet: no "nobody campaigns" line on stderr

Exit status: 0; or
  1   nobody campaigns at PATH (not with --watch)
  64  bad usage
  65  PATH is used by another kind of recipe, not an election
  69  ZooKeeper unavailable
  130 --watch interrupted
`,
	run: leaderCommand,
}

// leaderLine is what leader prints of a leader, as JSON.
type leaderLine struct {
	Path    string  `json:"path"`
	Leader  bool    `json:"leader"`
	ID      *string `json:"id,omitempty"` // "" is an id: Curator's default
	Node    string  `json:"node,omitempty"`
	Token   int64   `json:"fencing_token,omitempty"`
	Session string  `json:"session,omitempty"`
	Age     float64 `json:"age_seconds,omitempty"`
}

func leaderCommand(g globals, name string, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet(name, &g)
	watch := fs.Bool("watch", false, "")
	asJSON := fs.Bool("json", false, "")
	quiet := fs.Bool("q", false, "")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("leader: want exactly one PATH, got %d", len(pos))
	}
	path := pos[0]
	if err := recipes.ValidatePath(path); err != nil {
		return usagef("leader: %v", err)
	}
	show := func(n *inspected) error {
		line := leaderLine{Path: path, Leader: n != nil}
		if n != nil {
			line.ID, line.Node, line.Token, line.Session, line.Age = &n.Data, n.Node, n.Token, n.Session, n.Age
		}
		switch {
		case *asJSON:
			return json.NewEncoder(stdout).Encode(line)
		case n != nil:
			_, err := fmt.Fprintln(stdout, n.Data)
			return err
		case !*quiet:
			fmt.Fprintf(stderr, "zkrecipes: nobody campaigns at %s\n", path)
		}
		return nil
	}
	if !*watch {
		ctx, sess, done, err := quickSession(g)
		if err != nil {
			return err
		}
		defer done()
		in, err := describeElection(ctx, sess, path)
		if err != nil {
			return err
		}
		if err := show(in.Holder); err != nil {
			return err
		}
		if in.Holder == nil {
			return exitError{code: exitNothing}
		}
		return nil
	}

	ctx, w, err := startWaiting(g)
	if err != nil {
		return err
	}
	defer w.close()
	if _, err := describeElection(ctx, w.sess, path); err != nil {
		return err
	}
	var seen watched
	sess := w.sess
	defer func() {
		if sess != w.sess {
			_ = sess.Close()
		}
	}()
	for {
		if err := seen.follow(ctx, sess, path, show); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return exitError{exitInterrupted, nil}
		}
		// The session is lost: watch on in a new one.
		fmt.Fprintf(stderr, "zkrecipes: %v; reconnecting\n", sess.Err())
		for {
			s, err := connect(ctx, g)
			if ctx.Err() != nil {
				return exitError{exitInterrupted, nil}
			}
			if err == nil {
				if sess != w.sess {
					_ = sess.Close()
				}
				sess = s
				break
			}
			fmt.Fprintf(stderr, "zkrecipes: %v; trying again\n", err)
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
			}
		}
	}
}

// describeElection is what inspect finds at p, if p is an election (or
// nothing); an error with exit status 65 if it is another recipe.
func describeElection(ctx context.Context, sess *recipes.Session, p string) (inspection, error) {
	in, err := describe(ctx, sess, p)
	if err != nil {
		return in, err
	}
	switch in.Type {
	case leaderLatch, "mutex", "none", "missing":
		if len(in.Holders) == 0 && len(in.Waiters) > 0 {
			in.Holder = &in.Waiters[0] // the head, about to lead
		}
		return in, nil
	}
	what := "a " + in.Type
	if in.Type == "mixed" {
		what = "several recipes"
	}
	return in, exitError{exitConflict, fmt.Errorf("%s is used by %s, not by an election", p, what)}
}

// watched is what leader --watch has shown: whether anything yet, and the
// leader's node ("" for nobody).
type watched struct {
	shown bool
	last  string
}

// follow calls show with the leader at p, or nil while nobody campaigns,
// unless it is what was shown last, and again at each change, until ctx or
// the session ends. An election at p may be a latch's or a selector's (a
// mutex's): it watches for both, each watching only the head of its queue.
func (w *watched) follow(ctx context.Context, sess *recipes.Session, p string, show func(*inspected) error) error {
	latch, err := election.NewLatch(sess, p, "")
	if err != nil {
		return err
	}
	selector, err := election.NewSelector(sess, p, "")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	feeds := []<-chan recipes.Participant{latch.Observe(ctx), selector.Observe(ctx)}
	defer func() {
		cancel()
		for _, f := range feeds {
			for range f { // until the observer is gone
			}
		}
	}()
	heads := make([]*recipes.Participant, len(feeds)) // nil until a feed's first
	for {
		var p recipes.Participant
		var ok bool
		select {
		case p, ok = <-feeds[0]:
			heads[0] = &p
		case p, ok = <-feeds[1]:
			heads[1] = &p
		}
		if !ok {
			return nil // ctx or the session ended
		}
		if heads[0] == nil || heads[1] == nil {
			continue // a feed has not told its first leader yet
		}
		lead := heads[0] // the latch's leader, if it has one
		if lead.Path == "" {
			lead = heads[1]
		}
		if w.shown && lead.Path == w.last {
			continue
		}
		w.shown, w.last = true, lead.Path
		var n *inspected
		if lead.Path != "" {
			q := node(*lead, time.Now())
			n = &q
		}
		if err := show(n); err != nil {
			return err
		}
	}
}
