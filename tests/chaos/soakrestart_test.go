package chaos_test

import (
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/zkserver"
	"github.com/zkrecipes/recipes/tests/chaos"
)

// Rolling restarts, as an operator upgrading the ensemble makes them.
const (
	// careful: the next member only once the last has caught up with the
	// leader (zktest.Ensemble.Start).
	rollCareful = "careful"
	// careless: the next member at a random moment after the last was
	// launched, whether it serves yet or not (zktest.Ensemble.Launch).
	rollCareless = "careless"
)

// restarts rolls a phase's ensemble, round after round with a random
// pause of about rollGap before each, each member in turn in a random
// order (the leader among them), on its own goroutine, alternating careful
// and careless rounds. It checks every member's digest
// counter before it stops it, and every member's after each round.
type restarts struct {
	ph   *phase
	log  *chaos.Log
	quit chan struct{}
	done chan struct{}

	stopping sync.Once

	mu       sync.Mutex
	rounds   map[string]int // finished rounds by kind
	errs     []error
	findings []string
	reported map[int]int64 // by member: the digest mismatches it had counted when last reported
}

func startRestarts(ph *phase, log *chaos.Log) *restarts {
	rs := &restarts{ph: ph, log: log, quit: make(chan struct{}), done: make(chan struct{}), rounds: map[string]int{}, reported: map[int]int64{}}
	go rs.run()
	return rs
}

// stop ends the rolling after the member under way (every member it
// stopped has been started again) and waits for a quorum, once; it
// returns what went wrong.
func (rs *restarts) stop() []error {
	rs.stopping.Do(func() {
		close(rs.quit)
		<-rs.done
		if err := rs.ph.ensemble.WaitQuorum(); err != nil {
			rs.fail(err)
		}
	})
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.errs
}

func (rs *restarts) fail(err error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.errs = append(rs.errs, err)
}

// pause waits d, or less if the rolling is told to stop; it reports
// whether to go on.
func (rs *restarts) pause(d time.Duration) bool {
	select {
	case <-rs.quit:
		return false
	case <-time.After(d): // the operator's own pace, at random
		return true
	}
}

func (rs *restarts) run() {
	defer close(rs.done)
	e := rs.ph.ensemble
	gap := rs.ph.soak.cfg.rollGap
	for {
		if !rs.pause(gap/2 + rand.N(gap)) {
			return
		}
		kind := rollCareful
		if rs.ph.rounds%2 == 1 {
			kind = rollCareless
		}
		rs.ph.rounds++
		for _, m := range rand.Perm(e.Len()) {
			role := "follower"
			if e.Leader() == m {
				role = "leader"
			}
			rs.digest(m, "before its restart")
			note := fmt.Sprintf("%s rolling restart of a %d-member ensemble, member %d, the %s", kind, e.Len(), m+1, role)
			if err := rs.log.Append(chaos.Event{Type: chaos.EvSrvKill, Target: m + 1, Note: note}); err != nil {
				rs.fail(err)
			}
			start := e.Start
			if kind == rollCareless {
				start = e.Launch
			}
			if err := e.Stop(m); err != nil {
				rs.fail(err)
			}
			if err := start(m); err != nil {
				// An operator whose member did not come back (or
				// did not catch up) restarts it once more: a finding,
				// not yet a failure of the run.
				rs.mu.Lock()
				rs.findings = append(rs.findings, fmt.Sprintf("member %d of the %d-member ensemble did not come back at its %s restart (%v); restarted once more",
					m+1, e.Len(), kind, err))
				rs.mu.Unlock()
				if err := e.Stop(m); err != nil {
					rs.fail(err)
				}
				if err := start(m); err != nil {
					rs.fail(fmt.Errorf("%s, restarted once more: %w", note, err))
					return
				}
			}
			if err := rs.log.Append(chaos.Event{Type: chaos.EvSrvStart, Target: m + 1, Note: note}); err != nil {
				rs.fail(err)
			}
			next := time.Duration(rand.N(1500)) * time.Millisecond
			if kind == rollCareful {
				next += 500 * time.Millisecond
			}
			if !rs.pause(next) {
				return
			}
		}
		rs.mu.Lock()
		rs.rounds[kind]++
		rs.mu.Unlock()
		if kind == rollCareless {
			// The next round, careful, begins with every member serving.
			if err := e.WaitQuorum(); err != nil {
				rs.fail(err)
			}
		}
		for m := range e.Len() {
			rs.digest(m, "after a "+kind+" round")
		}
	}
}

// digest records a finding if member m has counted digest mismatches: a
// transaction whose digest did not match the member's tree once applied,
// the sign of a member gone inconsistent. A restarted member counts anew,
// replaying its log: the same count again is not a new finding.
func (rs *restarts) digest(m int, when string) {
	n, err := mntr(rs.ph.ensemble.Addr(m), "zk_digest_mismatches_count")
	if err != nil {
		return // a member that does not answer now is checked again later
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if n == 0 || n == rs.reported[m] {
		return
	}
	rs.reported[m] = n
	rs.findings = append(rs.findings, fmt.Sprintf("member %d of the %d-member ensemble counted %d digest mismatches (%s)",
		m+1, rs.ph.ensemble.Len(), n, when))
}

// counts returns the finished rounds by kind and the findings so far.
func (rs *restarts) counts() (map[string]int, []string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return maps.Clone(rs.rounds), append([]string(nil), rs.findings...)
}

// mntr returns one counter of a member's mntr answer.
func mntr(addr, key string) (int64, error) {
	out, err := zkserver.FourLetterWord(addr, "mntr", 5*time.Second)
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(out, "\n") {
		if k, v, ok := strings.Cut(line, "\t"); ok && k == key {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in the mntr answer of %s", key, addr)
}

// health returns the findings of an epoch: those of its rolling restarts,
// and what it finds in the members once the epoch's workers have all gone
// and their nodes with them: each member's digest mismatches (rs.digest);
// each must hold no ephemeral node (none under the root, synced with the
// leader, and zk_ephemerals_count, which is not synced, 0 within 5 s); and
// all must hold as many nodes (zk_znode_count: the containers the workers
// left are being reaped, so a difference must last 5 s). What it finds is a finding of the run, not a
// failed test: the recipes' promises are judged by the rules, and must
// hold whatever the ensemble does. Any finding makes the ensemble
// inconsistent.
func (ph *phase) health(rs *restarts) (findings []string, inconsistent bool) {
	var out []string
	for m := range ph.n {
		rs.digest(m, "once the workers had gone")
		addr := ph.ensemble.Addr(m)
		what := fmt.Sprintf("member %d of the %d-member ensemble", m+1, ph.n)
		// mntr reads the member's own tree, unsynced: a member a little
		// behind may count the last sessions' nodes for a moment.
		n, err := mntr(addr, "zk_ephemerals_count")
		for deadline := time.Now().Add(5 * time.Second); (err != nil || n != 0) && time.Now().Before(deadline); {
			time.Sleep(200 * time.Millisecond) // the member applying the sessions' ends
			n, err = mntr(addr, "zk_ephemerals_count")
		}
		if err != nil || n != 0 {
			out = append(out, fmt.Sprintf("%s: zk_ephemerals_count %d (%v) 5 s after the workers had gone", what, n, err))
		}
		left, err := ephemeralsUnder(addr, ph.root)
		if err != nil {
			out = append(out, fmt.Sprintf("%s: %v", what, err))
		}
		for _, l := range left {
			out = append(out, fmt.Sprintf("%s keeps %s once the workers had gone", what, l))
		}
	}
	var nodes []int64
	for deadline := time.Now().Add(5 * time.Second); ; {
		nodes = nodes[:0]
		for m := range ph.n {
			n, err := mntr(ph.ensemble.Addr(m), "zk_znode_count")
			if err != nil {
				n = -1
			}
			nodes = append(nodes, n)
		}
		if slices.Min(nodes) == slices.Max(nodes) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond) // the reaper's deletions reach every member
	}
	if slices.Min(nodes) != slices.Max(nodes) {
		out = append(out, fmt.Sprintf("the members of the %d-member ensemble hold different numbers of nodes (zk_znode_count %v) 5 s after the workers had gone", ph.n, nodes))
	}
	_, found := rs.counts() // the digest findings of the epoch's rounds, and of now
	return append(found, out...), len(found)+len(out) > 0
}

// ephemeralsUnder connects to the member at addr alone, syncs it with the
// leader, and returns the ephemeral nodes under root.
func ephemeralsUnder(addr, root string) ([]string, error) {
	conn, _, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogger(log.New(io.Discard, "", 0)))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if _, err := conn.Sync(root); err != nil {
		return nil, fmt.Errorf("sync: %w", err)
	}
	var out []string
	var walk func(p string) error
	walk = func(p string) error {
		kids, st, err := conn.Children(p)
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		if err != nil {
			return err
		}
		if st.EphemeralOwner != 0 {
			out = append(out, fmt.Sprintf("%s (ephemeralOwner=0x%x)", p, st.EphemeralOwner))
		}
		for _, k := range kids {
			if err := walk(p + "/" + k); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(root)
}
