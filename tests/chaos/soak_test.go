package chaos_test

import (
	"cmp"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/tests/chaos"
	"github.com/zkrecipes/recipes/zktest"
)

// soakConfig sizes a soak; see soakConfigFromEnv.
type soakConfig struct {
	sizes    []int         // the ensembles, one phase each, in turn
	duration time.Duration // the whole run's bound, shared evenly by the phases
	sections int           // the whole run's target, shared evenly: a phase ends once it has its share
	epoch    time.Duration // workers are replaced, and their timeline judged, every epoch
	procs    int           // worker processes
	timeout  time.Duration // their session timeout T
	gap      time.Duration // the mean time between two faults of one kind
	rollGap  time.Duration // the mean time between two rolling restart rounds
	hold     time.Duration // the time inside a section
	minEach  int           // a short run goes on until it has had this many faults and rolling rounds of each kind
	out      string        // where the report, the picture and kept timelines go; "": a temporary folder
	keep     bool          // keep every epoch's timeline, not only those with a violation
}

// soakConfigFromEnv returns the short soak of `make test` (about a minute,
// so that the harness cannot rot), or with SOAK_LONG=1 the long one of
// `make soak`. SOAK_DURATION, SOAK_SECTIONS, SOAK_EPOCH, SOAK_PROCS,
// SOAK_GAP, SOAK_ROLL_GAP and SOAK_SIZES (e.g. "3,5") override either; SOAK_OUT names
// the output folder and SOAK_KEEP=1 keeps every timeline.
func soakConfigFromEnv(t *testing.T) soakConfig {
	t.Helper()
	// The short run's sections hold for 20 ms, so that a fault on a
	// holder finds one among its 4 workers on a busy machine too.
	c := soakConfig{sizes: []int{3}, duration: 40 * time.Second, epoch: 20 * time.Second, procs: 4,
		timeout: 4 * time.Second, gap: 2 * time.Second, rollGap: 2 * time.Second, hold: 20 * time.Millisecond, minEach: 1}
	if os.Getenv("SOAK_LONG") == "1" {
		// 24 workers: with 20, a third of the 2-core machine's CPU
		// went unused (the sections wait on faults, not on CPU).
		c = soakConfig{sizes: []int{3, 5}, duration: 115 * time.Minute, sections: 1_000_000, epoch: 4 * time.Minute,
			procs: 24, timeout: 4 * time.Second, gap: 2500 * time.Millisecond, rollGap: 40 * time.Second, hold: 2 * time.Millisecond}
	}
	for name, dst := range map[string]*time.Duration{"SOAK_DURATION": &c.duration, "SOAK_EPOCH": &c.epoch, "SOAK_GAP": &c.gap, "SOAK_ROLL_GAP": &c.rollGap} {
		if v := os.Getenv(name); v != "" {
			d, err := time.ParseDuration(v)
			require.NoError(t, err, name)
			*dst = d
		}
	}
	for name, dst := range map[string]*int{"SOAK_SECTIONS": &c.sections, "SOAK_PROCS": &c.procs} {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			require.NoError(t, err, name)
			*dst = n
		}
	}
	if v := os.Getenv("SOAK_SIZES"); v != "" {
		c.sizes = nil
		for f := range strings.SplitSeq(v, ",") {
			n, err := strconv.Atoi(f)
			require.NoError(t, err, "SOAK_SIZES")
			c.sizes = append(c.sizes, n)
		}
	}
	c.out, c.keep = os.Getenv("SOAK_OUT"), os.Getenv("SOAK_KEEP") == "1"
	return c
}

// soakPaths returns n paths of a kind under a phase's root. A soak of p
// workers has 3p mutexes, p read/write locks, p/2 semaphores, 3p/2 members
// for its multi-locks (a section takes two) and p/4 elections: dozens of
// paths, shared by every worker, so that most sections take a free lock
// and some wait, and a fault stalls a few paths among many.
func soakPaths(root, kind string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s/%s-%02d", root, kind, i)
	}
	return out
}

// TestSoak is the soak of docs/faults.md: worker processes on every recipe
// over many paths, sections that read and write a Store that checks their
// tokens, and faults all the time at random — kill -9 and SIGSTOP of
// holders and waiters, one-way and both-way cuts of a worker's links, and
// rolling restarts of the ensemble, careful and careless — judged by the
// rules and, key by key, by porcupine.
func TestSoak(t *testing.T) {
	cfg := soakConfigFromEnv(t)
	s := newSoak(t, cfg)
	for i, n := range cfg.sizes {
		share := len(cfg.sizes) - i
		budget := min(cfg.duration-time.Since(s.start), cfg.duration/time.Duration(len(cfg.sizes)))
		target := 0
		if cfg.sections > 0 {
			target = max(0, (cfg.sections-s.total.sectionsAll())/share)
		}
		t.Run(fmt.Sprintf("%d-member", n), func(t *testing.T) { s.phase(t, n, budget, target) })
	}
	s.finish()
}

// phase runs epochs on an ensemble of n members until budget passes or
// target sections are done.
func (s *soak) phase(t *testing.T, n int, budget time.Duration, target int) {
	ph := &phase{soak: s, n: n, end: time.Now().Add(budget), target: target}
	ph.start(t)
	for k := 1; time.Now().Before(ph.end) && (target == 0 || ph.sections < target); k++ {
		if ph.epoch(t, k) {
			ph.rebuild(t, k)
		}
		if t.Failed() {
			return
		}
	}
}

// start starts the phase's ensemble, its root (a container of the soak's
// own: the ensemble is the soak's alone) and each worker slot's proxies to
// its members.
func (ph *phase) start(t *testing.T) {
	ph.ensemble = zktest.StartEnsemble(t, ph.n)
	ph.servers = ph.ensemble.Servers()
	ph.admin = zktest.Connect(t, ph.servers)
	ph.root = fmt.Sprintf("/soak-%d-member-%d", ph.n, ph.rebuilt)
	_, err := ph.admin.CreateContainer(ph.root, nil, zk.FlagContainer, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	ph.links = nil
	for range ph.soak.cfg.procs {
		var links []*testenv.Proxy
		for i := range ph.n {
			p, err := testenv.NewProxy(ph.ensemble.Addr(i))
			require.NoError(t, err)
			t.Cleanup(func() { _ = p.Close() })
			links = append(links, p)
		}
		ph.links = append(ph.links, links)
	}
}

// rebuild replaces an ensemble that went inconsistent in epoch k with a
// new one, as its operator would have to: an inconsistent member stays so
// (ZooKeeper 3.8.0 neither repairs nor stops it), and keeps nodes of
// expired sessions that would block the next epoch's locks for good.
func (ph *phase) rebuild(t *testing.T, k int) {
	t.Logf("soak: the %d-member ensemble went inconsistent in epoch %d: a new one takes its place", ph.n, k)
	for m := range ph.n {
		require.NoError(t, ph.ensemble.Stop(m))
	}
	for _, links := range ph.links {
		for _, p := range links {
			_ = p.Close()
		}
	}
	ph.rebuilt++
	ph.soak.total.rebuilt[ph.n]++
	ph.start(t)
}

// phase is one ensemble's part of the soak.
type phase struct {
	soak     *soak
	n        int
	end      time.Time
	target   int
	sections int
	ensemble *zktest.Ensemble
	servers  []string
	admin    *zk.Conn
	root     string
	links    [][]*testenv.Proxy // by slot: a proxy to each member
	timeline string             // the epoch's
	rounds   int                // rolling restart rounds begun
	rebuilt  int                // ensembles replaced after they went inconsistent
}

// spec is what the worker in slot does: a loop of every recipe, over the
// phase's paths, reading and writing the store.
func (ph *phase) spec(slot int) chaos.Spec {
	s := ph.soak
	var servers []string
	for _, p := range ph.links[slot] {
		servers = append(servers, p.Addr())
	}
	r, p := ph.root, s.cfg.procs
	return chaos.Spec{
		Servers:        servers,
		SessionTimeout: s.cfg.timeout,
		Timeline:       ph.timeline,
		Loops: []chaos.Loop{
			{Recipe: chaos.RecipeMutex, Paths: soakPaths(r, "mutex", 3*p)},
			{Recipe: chaos.RecipeMutex, Paths: soakPaths(r, "mutex", 3*p)},
			{Recipe: chaos.LoopRW, Paths: soakPaths(r, "rw", p)},
			{Recipe: chaos.RecipeLease, Paths: soakPaths(r, "sem", max(1, p/2)), Max: semMax},
			{Recipe: chaos.RecipeMulti, Paths: soakPaths(r, "multi", max(2, 3*p/2))},
			{Recipe: chaos.RecipeLatch, Path: soakPaths(r, "leader", max(1, p/4))[slot%max(1, p/4)]},
		},
		Hold:    s.cfg.hold,
		Pace:    0,
		Runtime: s.cfg.epoch + 10*s.cfg.timeout + time.Minute,
		Store:   s.store.Addr(),
	}
}

// soak is the whole run: its store, and what its epochs found.
type soak struct {
	t     *testing.T
	cfg   soakConfig
	out   string
	store *chaos.Store
	start time.Time
	total totals
}

func newSoak(t *testing.T, cfg soakConfig) *soak {
	s := &soak{t: t, cfg: cfg, out: cmp.Or(cfg.out, t.TempDir()), start: time.Now(), total: newTotals()}
	require.NoError(t, os.MkdirAll(s.out, 0o755))
	var err error
	s.store, err = chaos.NewStore(true)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.store.Close()) })
	return s
}
