package chaos_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/tests/chaos"
	"github.com/zkrecipes/recipes/zktest"
)

// run is one scenario's run: its servers, worker processes, timeline and
// the harness's own log of faults.
type run struct {
	t         *testing.T
	cfg       config
	sc        scenario
	admin     *zk.Conn
	root      string
	ensemble  *zktest.Ensemble // nil on the shared standalone server
	servers   []string
	followers []int            // the members workers connect to in an isolation scenario
	proxies   []*testenv.Proxy // one per slot when proxied
	timeline  string
	log       *chaos.Log
	view      *view
	spawned   int
	made      []string                  // the nodes the harness made for the run, deleted after it
	specOf    func(slot int) chaos.Spec // what a worker does; nil: spec
	orphans   int                       // nodes left behind, as finish found
	// keepOrphans leaves the judgement of the nodes left behind to the
	// caller (the soak): finish puts them in leftover.
	keepOrphans bool
	leftover    []zktest.Leftover
	commandOf   func(slot int) *exec.Cmd // a worker that is not this test binary (Curator's); nil: none

	mu    sync.Mutex
	procs map[int]*proc // live workers by pid
	all   []*proc
}

// proc is one worker process.
type proc struct {
	slot   int
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr string // file
	exited chan struct{}
	err    error // valid once exited is closed
}

// Lock paths under the run's root, one set for every worker; and the
// election's path, which workers of an election scenario campaign at
// instead.
const (
	pathMutex  = "/mutex"
	pathRW     = "/rw"
	pathSem    = "/sem"
	semMax     = 2
	pathLeader = "/leader"
)

var multiMembers = []string{"/multi-a", "/multi-b", "/multi-c"}

// lockPaths returns every lock path of a run under root.
func lockPaths(root string) []string {
	out := []string{root + pathMutex, root + pathRW, root + pathSem}
	for _, m := range multiMembers {
		out = append(out, root+m)
	}
	return out
}

func newRun(t *testing.T, cfg config, sc scenario) *run {
	t.Helper()
	r := &run{t: t, cfg: cfg, sc: sc, procs: map[int]*proc{}}
	switch {
	case sc.isolate:
		r.ensemble = zktest.StartEnsemble(t, 3, zktest.WithPeerProxies(),
			zktest.WithConfig("tickTime", fmt.Sprint(isolationTick.Milliseconds())),
			zktest.WithConfig("syncLimit", fmt.Sprint(isolationSyncLimit)))
		r.servers = r.ensemble.Servers()
		r.followers = r.ensemble.Followers()
	case sc.ensemble:
		r.ensemble = zktest.StartEnsemble(t, 3)
		r.servers = r.ensemble.Servers()
	default:
		r.servers = zktest.Servers(t)
	}
	r.admin = zktest.Connect(t, r.servers)
	r.root = zktest.Root(t, r.admin)
	_, err := r.admin.CreateContainer(r.root, nil, zk.FlagContainer, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	r.made = r.persistent()
	for _, p := range r.made {
		_, err := r.admin.Create(p, nil, 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
	}
	dir := t.TempDir()
	if keep := os.Getenv("CHAOS_KEEP"); keep != "" {
		// Keep the timeline and the workers' stderr after the run.
		dir = filepath.Join(keep, strings.ReplaceAll(t.Name(), "/", "_"))
		require.NoError(t, os.RemoveAll(dir))
		require.NoError(t, os.MkdirAll(dir, 0o755))
	}
	r.timeline = filepath.Join(dir, "timeline.jsonl")
	r.log, err = chaos.OpenLog(r.timeline)
	require.NoError(t, err)
	t.Cleanup(func() { r.log.Close() })
	r.view = newView(r.timeline)
	if sc.proxied {
		for range cfg.procs {
			p, err := testenv.NewProxy(r.servers[0])
			require.NoError(t, err)
			t.Cleanup(func() { _ = p.Close() })
			r.proxies = append(r.proxies, p)
		}
	}
	return r
}

// paths returns the run's lock paths, or its election's path.
func (r *run) paths() []string {
	if r.sc.election {
		return []string{r.root + pathLeader}
	}
	return lockPaths(r.root)
}

// configNodes are the nodes whose changes holders watch in the one-way
// partition scenario.
func (r *run) configNodes() []string {
	if !r.sc.watch {
		return nil
	}
	return []string{r.root + "/config-1", r.root + "/config-2", r.root + "/config-3"}
}

// persistent lists the nodes the harness makes for a run and deletes after
// it: the resources that guarded writes go to, and the config nodes.
func (r *run) persistent() []string {
	var out []string
	for _, p := range r.paths() {
		out = append(out, chaos.ResourceOf(p))
	}
	return append(out, r.configNodes()...)
}

// spec is what the worker in slot does.
func (r *run) spec(slot int) chaos.Spec {
	servers := r.servers
	switch {
	case r.proxies != nil:
		servers = []string{r.proxies[slot].Addr()}
	case r.followers != nil:
		servers = []string{r.ensemble.Addr(r.followers[slot%len(r.followers)])}
	}
	loops := []chaos.Loop{
		{Recipe: chaos.RecipeMutex, Path: r.root + pathMutex},
		{Recipe: chaos.LoopRW, Path: r.root + pathRW},
		{Recipe: chaos.RecipeLease, Path: r.root + pathSem, Max: semMax},
		{Recipe: chaos.RecipeMulti, Paths: lockPaths(r.root)[3:]},
	}
	if r.sc.noLock {
		loops = loops[:1]
	}
	if r.sc.election {
		loops = []chaos.Loop{{Recipe: chaos.RecipeLatch, Path: r.root + pathLeader}}
	}
	return chaos.Spec{
		Servers:        servers,
		SessionTimeout: r.sc.timeout,
		Timeline:       r.timeline,
		Loops:          loops,
		Hold:           cmp.Or(r.sc.hold, r.cfg.hold),
		Pace:           r.sc.pace,
		Runtime:        r.cfg.runtime,
		Watch:          r.configNodes(),
		NoLock:         r.sc.noLock,
		Blind:          r.sc.blind,
	}
}

// spawn starts a worker in slot.
func (r *run) spawn(slot int) {
	r.t.Helper()
	exe, err := os.Executable()
	require.NoError(r.t, err)
	spec := r.spec
	if r.specOf != nil {
		spec = r.specOf
	}
	raw, err := json.Marshal(spec(slot))
	require.NoError(r.t, err)
	r.spawned++
	p := &proc{slot: slot, exited: make(chan struct{}),
		stderr: filepath.Join(filepath.Dir(r.timeline), fmt.Sprintf("worker-%d-%d.stderr", slot, r.spawned))}
	errFile, err := os.Create(p.stderr)
	require.NoError(r.t, err)
	defer errFile.Close()
	if r.commandOf != nil {
		p.cmd = r.commandOf(slot)
	} else {
		p.cmd = exec.Command(exe, "-test.run=^$")
		// A race the detector reports does not change the worker's exit
		// status: finish reads its reports and fails the test on any
		// that involves this module (see raceReports).
		p.cmd.Env = append(os.Environ(), chaos.WorkerEnv+"="+string(raw), "GORACE=exitcode=0")
	}
	p.cmd.Stderr = errFile
	p.stdin, err = p.cmd.StdinPipe()
	require.NoError(r.t, err)
	require.NoError(r.t, p.cmd.Start())
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	r.mu.Lock()
	r.procs[p.cmd.Process.Pid] = p
	r.all = append(r.all, p)
	r.mu.Unlock()
	r.fault(chaos.Event{Type: chaos.EvSpawn, Target: p.cmd.Process.Pid, Note: fmt.Sprint("slot ", slot)})
}

// fault appends one of the harness's events and returns its sequence.
func (r *run) fault(ev chaos.Event) int {
	r.t.Helper()
	require.NoError(r.t, r.log.Append(ev))
	require.NoError(r.t, r.view.refresh())
	return r.view.own
}

// await re-reads the timeline until cond holds, and reports whether it did
// within d.
func (r *run) await(d time.Duration, cond func(v *view) bool) bool {
	r.t.Helper()
	deadline := time.Now().Add(d)
	for {
		require.NoError(r.t, r.view.refresh())
		if cond(r.view) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(poll) // the timeline is a file: re-read it
	}
}

// mustAwait is await that fails the test.
func (r *run) mustAwait(what string, d time.Duration, cond func(v *view) bool) {
	r.t.Helper()
	if !r.await(d, cond) {
		r.t.Fatalf("%s: not seen in the timeline within %v", what, d)
	}
}

// kill sends SIGKILL to pid, waits until it has exited, logs the kill and
// starts a new worker in its slot to keep the count. It returns the kill's
// sequence in the timeline.
func (r *run) kill(pid int, note string) int {
	r.t.Helper()
	r.mu.Lock()
	p := r.procs[pid]
	delete(r.procs, pid)
	r.mu.Unlock()
	require.NotNil(r.t, p, "pid %d is not a live worker", pid)
	require.NoError(r.t, syscall.Kill(pid, syscall.SIGKILL))
	<-p.exited
	r.view.forget(pid)
	seq := r.fault(chaos.Event{Type: chaos.EvKill, Target: pid, Note: note})
	r.spawn(p.slot)
	return seq
}

// finish ends the run: closes every worker's stdin, waits for each to exit
// within the bound (killing and reporting stragglers as hung), then checks
// the timeline and that nothing is left under the root.
func (r *run) finish() *chaos.Report {
	r.t.Helper()
	r.mu.Lock()
	live := make(map[int]*proc, len(r.procs))
	for pid, p := range r.procs {
		live[pid] = p
		_ = p.stdin.Close()
	}
	r.mu.Unlock()
	bound := time.After(2*r.sc.timeout + 15*time.Second)
	for pid, p := range live {
		select {
		case <-p.exited:
		case <-bound:
			_ = syscall.Kill(pid, syscall.SIGKILL)
			<-p.exited
			r.fault(chaos.Event{Type: chaos.EvHung, Target: pid})
		}
	}
	for _, p := range r.all {
		out, _ := os.ReadFile(p.stderr)
		ours, theirs := raceReports(string(out))
		for _, rep := range ours {
			r.t.Errorf("worker %d: a data race in this module:\n%s", p.cmd.Process.Pid, rep)
		}
		if len(theirs) > 0 {
			r.t.Logf("worker %d: %d data race reports entirely inside go-zookeeper (its lastZxid, read while it restores watches after a reconnect), not counted", p.cmd.Process.Pid, len(theirs))
		}
		if p.err != nil && p.cmd.ProcessState.Sys().(syscall.WaitStatus).Signaled() {
			continue // killed by the harness
		}
		if p.err != nil {
			r.t.Errorf("worker %d exited with %v:\n%s", p.cmd.Process.Pid, p.err, out)
		}
	}
	events, err := chaos.ReadTimeline(r.timeline)
	require.NoError(r.t, err)
	report := chaos.Check(events)
	if r.keepOrphans {
		r.leftover = r.leftovers()
	} else {
		r.orphans = r.checkOrphans()
	}
	return report
}

// raceReports splits the race detector's reports in a worker's stderr into
// those whose stacks touch this module and those entirely inside
// go-zookeeper v1.0.4, which races on its lastZxid when it restores watches
// after a reconnect (the fault suite reconnects often) whatever its user
// does. Any other report counts as ours.
func raceReports(stderr string) (ours, theirs []string) {
	for rep := range strings.SplitSeq(stderr, "==================") {
		if !strings.Contains(rep, "WARNING: DATA RACE") {
			continue
		}
		// The two accesses' stacks come first; then where each goroutine
		// was created, which for go-zookeeper's own goroutines names our
		// Connect.
		accesses, _, _ := strings.Cut(rep, "\nGoroutine ")
		if strings.Contains(accesses, "github.com/zkrecipes/") || !strings.Contains(accesses, "github.com/go-zookeeper/zk.") {
			ours = append(ours, rep)
		} else {
			theirs = append(theirs, rep)
		}
	}
	return ours, theirs
}

// checkOrphans reports the nodes left behind (leftovers) and returns how
// many there are.
func (r *run) checkOrphans() int {
	r.t.Helper()
	orphans := r.leftovers()
	for _, o := range orphans {
		r.t.Errorf("orphan: %s", o)
	}
	return len(orphans)
}

// leftovers deletes the run's own persistent nodes, waits for the sessions
// of killed workers to expire, and returns what is left.
func (r *run) leftovers() []zktest.Leftover {
	r.t.Helper()
	for _, p := range r.made {
		require.NoError(r.t, r.admin.Delete(p, -1))
	}
	ephemeral := func() bool {
		for _, p := range zktest.Tree(r.t, r.admin, r.root) {
			if _, st, err := r.admin.Get(p); err == nil && st.EphemeralOwner != 0 {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(2*r.sc.timeout + 5*time.Second)
	for ephemeral() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond) // killed sessions expire on the server's clock
	}
	orphans, err := zktest.Leftovers(r.admin, r.root)
	require.NoError(r.t, err)
	return orphans
}

// TestRaceReports: the fault suite lets through only go-zookeeper's own
// races (testdata/race-gozk.txt is one, from a worker), not one whose
// accesses are in this module, even when the goroutines were created by it.
func TestRaceReports(t *testing.T) {
	raw, err := os.ReadFile("testdata/race-gozk.txt")
	if err != nil {
		t.Fatal(err)
	}
	gozk := string(raw)
	if ours, theirs := raceReports("noise\n" + gozk); len(ours) != 0 || len(theirs) != 1 {
		t.Fatalf("go-zookeeper's race: %d ours, %d theirs", len(ours), len(theirs))
	}
	mine := strings.Replace(gozk, "github.com/go-zookeeper/zk.(*Conn).recvLoop()", "github.com/zkrecipes/recipes.(*Session).onEvent()", 1)
	if ours, _ := raceReports(mine); len(ours) != 1 {
		t.Fatalf("a race with an access in this module was not flagged")
	}
	plain := "==================\nWARNING: DATA RACE\nWrite at 0x1 by goroutine 1:\n  main.f()\n==================\n"
	if ours, _ := raceReports(plain); len(ours) != 1 {
		t.Fatalf("a race outside go-zookeeper was not flagged")
	}
}
