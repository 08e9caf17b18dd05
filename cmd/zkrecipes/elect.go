package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
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
                lost), until a signal stops it. A CMD that fails within
                30s of starting is run again only after a pause: 500ms,
                doubling at each such failure in a row, up to 30s. It
                takes no --timeout or -n
` + timeoutUsage + tryOnceUsage + quietUsage + `
While CMD runs its environment has ZKRECIPES_ELECTION_PATH,
ZKRECIPES_LEADER_ID (ID) and ZKRECIPES_FENCING_TOKEN (greater at each new
term). Signals are passed on to CMD; with --requeue, once CMD exits after
one, zkrecipes exits too. If leadership is lost, CMD gets SIGTERM, SIGKILL a
twentieth of the session timeout later (before any other participant can
lead), and zkrecipes exits 79, or with --requeue campaigns again. Unless
stdin is a terminal, CMD runs in a process group of its own and the signals
go to the whole group. If zkrecipes is killed, so is CMD.

Exit status: CMD's own status (128+N if killed by signal N), or
` + exitRows + `  79  leadership lost while CMD ran
  127 --requeue: CMD not found
  130 interrupted while campaigning
With --requeue it ends only on a signal, with CMD's status if CMD was
running (130 if it was campaigning), or on 65 or 77.
`,
	run: electCommand,
}

// candidate is a participant in an election: an *election.Latch or an
// *election.Selector.
type candidate interface {
	election.Campaigner
	Path() string
	ID() string
	TryCampaign(ctx context.Context) (*locks.Hold, bool, error)
	Participants(ctx context.Context) ([]recipes.Participant, error)
	Observe(ctx context.Context) <-chan recipes.Participant
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
	env := func(ops lockOps, h *locks.Hold) []string {
		return []string{
			"ZKRECIPES_ELECTION_PATH=" + path,
			"ZKRECIPES_LEADER_ID=" + id,
			"ZKRECIPES_FENCING_TOKEN=" + strconv.FormatInt(h.Token(), 10),
		}
	}
	if *requeue {
		// A command that cannot start would fail at every term.
		if _, err := exec.LookPath(command[0]); err != nil {
			return exitError{127, fmt.Errorf("elect: %v", err)}
		}
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

// Pauses before a command that failed soon after it started runs again
// (elect --requeue).
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
	env      func(ops lockOps, h *locks.Hold) []string
	status   io.Writer // status lines; nowhere with -q
	stderr   io.Writer
}

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
	first := w.sess
	code := -1 // the command's status, once a signal passed on to it ended the run
	pause := minRequeuePause
	var sess *recipes.Session // the session of the campaign
	runner := election.Runner{
		Connect: func(ctx context.Context) (*recipes.Session, error) {
			if s := first; s != nil {
				first = nil
				return s, nil
			}
			s, err := connect(ctx, g)
			if err != nil {
				fmt.Fprintf(r.stderr, "zkrecipes: %v; trying again\n", err)
				return nil, err
			}
			fmt.Fprintf(r.status, "zkrecipes: new session %#x\n", s.ID())
			return s, nil
		},
		Candidate: func(s *recipes.Session) (election.Campaigner, error) {
			sess = s
			c, err := newCandidate(s, r.path, r.id, r.selector)
			if err != nil {
				return nil, err
			}
			return reporting{c, r.stderr}, nil
		},
		Lead: func(_ context.Context, term *locks.Hold) error {
			if w.stop() {
				return nil // a signal came as the term began: Run's ctx has ended
			}
			start := time.Now()
			fmt.Fprintf(r.status, "zkrecipes: leading %s (fencing token %d)\n", r.path, term.Token())
			e := child{
				command: r.command, env: r.env(lockOps{path: r.path}, term), sessionTimeout: sess.Timeout(),
				sigs: w.sigs, stderr: r.stderr, what: "leadership",
			}.run(term.Context(), nil)
			release, cancel := context.WithTimeout(context.Background(), sess.Timeout())
			_ = term.Release(release)
			cancel()
			if e.signalled {
				code = e.code
				w.cancel()
				return nil
			}
			w.stop = cancelOnSignal(w.sigs, w.cancel)
			switch {
			case e.lost:
				fmt.Fprintf(r.status, "zkrecipes: campaigning again for %s\n", r.path)
			case e.code != 0 && time.Since(start) < maxRequeuePause:
				fmt.Fprintf(r.stderr, "zkrecipes: the command exited with status %d; campaigning again for %s in %v\n", e.code, r.path, pause)
				t := time.NewTimer(pause)
				defer t.Stop()
				pause = min(2*pause, maxRequeuePause)
				select {
				case <-t.C:
				case <-ctx.Done():
				}
			default:
				pause = minRequeuePause
				fmt.Fprintf(r.status, "zkrecipes: the command exited with status %d; campaigning again for %s\n", e.code, r.path)
			}
			return nil
		},
	}
	err = runner.Run(ctx)
	switch {
	case code >= 0:
		return exitError{code: code}
	case ctx.Err() != nil:
		return exitError{exitInterrupted, fmt.Errorf("interrupted while campaigning for %s", r.path)}
	case errors.Is(err, recipes.ErrInvalid):
		return usagef("elect: %v", err)
	}
	return waitFailure(ctx, r.path, err)
}

// reporting is a candidate whose failed campaigns are told, as the Runner
// tries them again.
type reporting struct {
	candidate
	stderr io.Writer
}

func (c reporting) Campaign(ctx context.Context) (*locks.Hold, error) {
	h, err := c.candidate.Campaign(ctx)
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(c.stderr, "zkrecipes: campaign for %s: %v\n", c.Path(), err)
	}
	return h, err
}
