package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/election"
	"github.com/zkrecipes/recipes/locks"
)

var electCmd = command{
	name: "elect",
	summary: `  elect PATH [--id ID] [--selector] [--requeue] -- CMD [ARG...]
        run CMD while leading the election at PATH (Curator LeaderLatch, or
        LeaderSelector with --selector); --requeue campaigns again after
        each term, for as long as it runs
`,
	usage: `usage: zkrecipes elect PATH [--id ID] [--selector] [--requeue] [flags] -- CMD...

Campaign in the election at PATH and run CMD while this process leads. The
election is Curator's LeaderLatch, on its nodes, with ID as their data: Go
and Java participants on one path elect one leader among them. Candidates
lead in the order they campaigned. When CMD exits, zkrecipes resigns (the
next in line leads) and exits with CMD's status.

  --id ID       this participant's id, which leader and inspect show and
                Curator's getLeader returns (default host:pid)
  --selector    campaign in a Curator LeaderSelector's election instead: an
                InterProcessMutex at PATH, whose node carries ID
  --requeue     campaign again after each term, when CMD exits and when
                leadership is lost (in a new session if the session was
                lost), until SIGINT, SIGTERM or SIGQUIT stops it. After a
                term shorter than 30s it waits before campaigning again:
                500ms, doubling at each failing CMD in a row, up to 30s.
                It takes no --timeout or -n
` + timeoutUsage + tryOnceUsage + quietUsage + `
While CMD runs its environment has ZKRECIPES_ELECTION_PATH,
ZKRECIPES_LEADER_ID (ID) and ZKRECIPES_FENCING_TOKEN (greater at each new
term). Signals are passed on to CMD; with --requeue, once CMD exits after
SIGINT, SIGTERM or SIGQUIT, zkrecipes exits too (SIGHUP is only passed on,
and ignored while campaigning). If leadership is lost, CMD gets SIGTERM,
SIGKILL a twentieth of the session timeout later (before any other
participant can lead), and zkrecipes exits 79, or with --requeue campaigns
again. Unless stdin is a terminal, CMD runs in a process group of its own
and the signals go to the whole group. If zkrecipes is killed, so is CMD.
` + cmdExitHead + rowUsage + rowConflict + rowUnavailable + rowTimeout + rowNoPerm + `  79  leadership lost while CMD ran
` + rowCannotRun + `  130 interrupted while campaigning (not with --requeue)
With --requeue a signal ends the run with CMD's status if CMD was running,
else 0; it also ends on 64, 65, 69 (at the start only) and 77, and goes on
through the other failures, campaigning again.
`,
	run: electCommand,
}

// candidate is a participant in an election: an *election.Latch or an
// *election.Selector.
type candidate interface {
	election.Campaigner
	TryCampaign(ctx context.Context) (*locks.Hold, bool, error)
	Participants(ctx context.Context) ([]recipes.Participant, error)
}

// newCandidate is the participant id in the election at path: a Latch, or
// a Selector if selector.
func newCandidate(sess *recipes.Session, path, id string, selector bool) (candidate, error) {
	if selector {
		return election.NewSelector(sess, path, id)
	}
	return election.NewLatch(sess, path, id)
}

func electCommand(g globals, name string, args []string, _, stderr io.Writer) error {
	own, command, err := splitCommand(name, args)
	if err != nil {
		return err
	}
	fs := newFlagSet(name, &g)
	wf := addWaitFlags(fs, "id")
	selector := fs.Bool("selector", false, "")
	requeue := fs.Bool("requeue", false, "")
	pos, err := parseInterspersed(fs, own)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("elect: want exactly one PATH, got %d", len(pos))
	}
	path := pos[0]
	once, err := wf.tryOnce(name)
	if err != nil {
		return err
	}
	if *requeue && (once || wf.timeoutSet) {
		return usagef("elect: --requeue campaigns for as long as it runs: it takes no --timeout or -n")
	}
	if err := recipes.ValidatePath(path); err != nil {
		return usagef("elect: %v", err)
	}
	id := wf.data
	if !flagSet(fs, "id") {
		id = string(recipes.DefaultData())
	}
	if len(id) > recipes.MaxDataSize {
		return usagef("elect: --id is %d bytes, more than %d", len(id), recipes.MaxDataSize)
	}
	env := func(path string, h *locks.Hold) []string {
		return []string{
			"ZKRECIPES_ELECTION_PATH=" + path,
			"ZKRECIPES_LEADER_ID=" + id,
			"ZKRECIPES_FENCING_TOKEN=" + strconv.FormatInt(h.Token(), 10),
		}
	}
	if err := findCommand(name, command); err != nil {
		return err
	}
	if *requeue {
		return requeued{path: path, id: id, selector: *selector, command: command, env: env, status: wf.status(stderr), stderr: stderr}.run(g)
	}
	return holding{
		name: name, wf: wf, once: once, command: command, what: "leadership", acquired: "leading",
		build: func(sess *recipes.Session) (lockOps, error) {
			c, err := newCandidate(sess, path, id, *selector)
			if err != nil {
				return lockOps{}, err
			}
			status := func(ctx context.Context) string { return leaderStatus(ctx, sess, c) }
			return lockOps{path: path, lock: c.Campaign, try: c.TryCampaign, status: status}, nil
		},
		env: env,
	}.run(g, stderr)
}

// leaderStatus says who leads, for a campaign's waiting line.
func leaderStatus(ctx context.Context, sess *recipes.Session, c candidate) string {
	ps, err := c.Participants(ctx)
	if err != nil || len(ps) == 0 || ps[0].Session == sess.ID() {
		return ""
	}
	s := ", led by " + dataLabel(ps[0].Data, false)
	others := 0 // waiting, besides this session's own
	for _, p := range ps[1:] {
		if p.Session != sess.ID() {
			others++
		}
	}
	if others > 0 {
		s += ", " + plural(others, "other") + " waiting"
	}
	return s
}

// The pause before campaigning again after a term whose command ran less
// than maxRequeuePause (elect --requeue): minRequeuePause, doubled at each
// failing command in a row, up to maxRequeuePause. A lone candidate whose
// command exits at once does not spin.
const (
	minRequeuePause = 500 * time.Millisecond
	maxRequeuePause = 30 * time.Second
)

// requeued is elect --requeue: an election.Runner whose term runs the
// command.
type requeued struct {
	path, id string
	selector bool
	command  []string
	env      func(path string, h *locks.Hold) []string
	status   io.Writer // status lines; nowhere with -q
	stderr   io.Writer
}

// run campaigns and leads until a signal stops it (SIGINT, SIGTERM,
// SIGQUIT; SIGHUP is only passed on to the command): it returns the
// command's status if the command was running, else 0. It fails only at
// the start (no ZooKeeper) or for good (the path another recipe's, the
// nodes' ACL refusing); it retries the rest.
func (r requeued) run(g globals) error {
	g.boundConnect(0, false)
	// The first session is made here, so that a ZooKeeper that cannot be
	// reached at the start is an error, as for every command; later ones
	// are retried for as long as it runs.
	ctx, w, err := startWaiting(g)
	if err != nil {
		return err
	}
	defer w.close()
	if w.stop() {
		return nil // stopped while connecting
	}
	arm := func() { w.stop = cancelOn(w.sigs, w.cancel, stopping) }
	arm()
	first := w.sess
	code := 0 // the command's status, if a stop ended the run while it ran
	pause := minRequeuePause
	var sess *recipes.Session // the session of the campaign
	runner := election.Runner{
		Connect: func(ctx context.Context) (*recipes.Session, error) {
			if s := first; s != nil {
				first = nil
				return s, nil
			}
			s, err := connect(ctx, g)
			switch {
			case ctx.Err() != nil:
			case err != nil:
				fmt.Fprintf(r.stderr, "zkrecipes: %v; trying again\n", err)
			default:
				fmt.Fprintf(r.status, "zkrecipes: new session %#x\n", s.ID())
			}
			return s, err
		},
		Candidate: func(s *recipes.Session) (election.Campaigner, error) {
			sess = s
			c, err := newCandidate(s, r.path, r.id, r.selector)
			if err != nil {
				return nil, err
			}
			return campaign(func(ctx context.Context) (*locks.Hold, error) {
				// It says who leads once it waits, as lock does.
				var say func()
				if r.status != io.Discard {
					say = func() {
						if line := leaderStatus(ctx, s, c); line != "" {
							fmt.Fprintf(r.status, "zkrecipes: campaigning for %s%s\n", r.path, line)
						}
					}
				}
				h, err := waitSaying(ctx, c.Campaign, 0, say)
				switch {
				case err == nil || ctx.Err() != nil:
				case errors.Is(err, recipes.ErrInvalid), errors.Is(err, recipes.ErrOtherRecipe), notAllowed(err):
					// The Runner gives up: run says why.
				default:
					fmt.Fprintf(r.stderr, "zkrecipes: campaign for %s: %v; trying again\n", r.path, err)
				}
				return h, err
			}), nil
		},
		Lead: func(_ context.Context, term *locks.Hold) error {
			if w.stop() {
				return nil // stopped as the term began: Run's ctx has ended
			}
			start := time.Now()
			fmt.Fprintf(r.status, "zkrecipes: leading %s (fencing token %d)\n", r.path, term.Token())
			e := child{
				command: r.command, env: r.env(r.path, term), sessionTimeout: sess.Timeout(),
				sigs: w.sigs, stderr: r.stderr, what: "leadership",
			}.run(term.Context(), nil)
			release, cancel := context.WithTimeout(context.Background(), sess.Timeout())
			_ = term.Release(release)
			cancel()
			if e.stopped {
				code = e.code
				w.cancel()
				return nil
			}
			arm()
			wait := time.Duration(0)
			switch {
			case time.Since(start) >= maxRequeuePause:
				pause = minRequeuePause
			case e.code != 0 && !e.lost:
				wait, pause = pause, min(2*pause, maxRequeuePause)
			default:
				wait, pause = minRequeuePause, minRequeuePause
			}
			what, out := fmt.Sprintf("the command exited with status %d", e.code), r.status
			switch {
			case e.lost:
				what = "leadership lost"
			case e.code != 0:
				out = r.stderr // a failure: not a status line
			}
			if wait == 0 {
				fmt.Fprintf(out, "zkrecipes: %s; campaigning again for %s\n", what, r.path)
				return nil
			}
			fmt.Fprintf(out, "zkrecipes: %s; campaigning again for %s in %v\n", what, r.path, wait)
			t := time.NewTimer(wait)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
			}
			return nil
		},
	}
	err = runner.Run(ctx)
	switch {
	case ctx.Err() != nil:
		return exitError{code: code}
	case errors.Is(err, recipes.ErrInvalid):
		return usagef("elect: %v", err)
	}
	return waitFailure(ctx, r.path, err)
}

// campaign is an election.Campaigner made of a function.
type campaign func(ctx context.Context) (*locks.Hold, error)

func (c campaign) Campaign(ctx context.Context) (*locks.Hold, error) { return c(ctx) }
