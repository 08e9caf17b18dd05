package bench_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/election"
	"github.com/zkrecipes/recipes/locks"
	"github.com/zkrecipes/recipes/zktest"
)

const (
	// failoverSession is the session timeout of every participant of
	// BenchmarkFailover, leaders and followers, ours and Curator's.
	failoverSession = 4 * time.Second
	// killsEnv names the environment variable that sets how many leaders
	// BenchmarkFailover kills on each side (default defaultKills); a
	// -benchtime Nx above 1 sets it too.
	killsEnv     = "ZKBENCH_KILLS"
	defaultKills = 5
	// killJitter bounds the random wait before each kill, so that the kill
	// falls anywhere in the leader's heartbeat cycle (a ping or a sync at
	// least every 1.33 s, both sides, with a 4 s session): how long before
	// the kill the server last heard from the leader decides when it
	// expires the session.
	killJitter = 1500 * time.Millisecond
	// failoverWait bounds one fail-over.
	failoverWait = 30 * time.Second
	// leaderEnv names the environment variable that makes the test binary
	// the leader that BenchmarkFailover kills (runFailoverLeader): its
	// value is the election's path.
	leaderEnv = "ZKBENCH_FAILOVER_LEADER"
)

// BenchmarkFailover kills the leader of an election with SIGKILL while a
// follower waits behind it, and times the fail-over: from the kill until
// the follower leads, which is the server's expiry of the leader's session
// (4 s after it last heard from it, rounded up to its tick, 100 ms here)
// plus the follower's notice. It alternates the two sides, a kill of each
// per round, on the same server with the same session timeout:
//
//   - latch: ours. The leader is this test binary run again as a child
//     process (runFailoverLeader) holding an election.Latch; the follower a
//     Latch in this process, on a session of its own; it leads when its
//     Campaign returns.
//   - curator: Curator's LeaderLatch. The leader is the Java peer's latch
//     mode; the follower a second Java peer (bench-latch-follow), which
//     prints a line as soon as its await returns: the time is when this
//     process reads it, the pipe's latency included (microseconds).
//
// A round starts the leader and waits until it leads, has the follower
// campaign, waits until its node is there and then settle, sets a watch on
// the leader's node from an observer's connection, waits a random time
// below killJitter, and kills. For each side it reports the fail-over's
// least, median, 90th percentile and most (latch-p50-ms, curator-p50-ms,
// and so on), and the median of the follower's notice: the time from the
// observer hearing of the leader node's deletion until the follower leads
// (latch-notice-p50-ms), the part of the fail-over that is the recipe's.
// ns/op is the benchmark's time per kill, setup included. Each kill is
// logged.
func BenchmarkFailover(b *testing.B) {
	kills := defaultKills
	if v := os.Getenv(killsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("%s=%q: want a number of kills, at least 1", killsEnv, v)
		}
		kills = n
	}
	if b.N > 1 {
		kills = b.N
	}
	admin, root := newRoot(b)
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel) // after the sides' cleanups: the Java follower exits on its own first
	leaders := newRelay(b, servers(b)[0])
	sides := []failoverSide{newLatchSide(b, root+"/latch", leaders.addr()), newCuratorSide(b, ctx, root+"/curator", leaders.addr())}
	times := make([][]failover, len(sides))
	start := time.Now()
	for round := range kills {
		for i := range sides {
			j := (i + round) % len(sides) // each side first in turn
			times[j] = append(times[j], killLeader(b, ctx, admin, leaders, sides[j]))
		}
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(kills*len(sides)), "ns/op")
	for i, s := range sides {
		var led, heard, notice []time.Duration
		for _, f := range times[i] {
			led = append(led, f.led)
			heard = append(heard, f.heard)
			notice = append(notice, f.led-f.expired)
		}
		// Benchmark logs are cut at 10 lines: two a side.
		b.Logf("%s: fail-overs %s ms", s.name(), msList(led))
		b.Logf("%s: since last heard %s ms", s.name(), msList(heard))
		for _, q := range []struct {
			name string
			q    float64
		}{{"min", 0}, {"p50", 0.5}, {"p90", 0.9}, {"max", 1}} {
			b.ReportMetric(ms(percentile(led, q.q)), s.name()+"-"+q.name+"-ms")
		}
		b.ReportMetric(ms(percentile(heard, 0.5)), s.name()+"-heard-p50-ms")
		b.ReportMetric(ms(percentile(notice, 0.5)), s.name()+"-notice-p50-ms")
	}
}

// A failover is one kill's times, from the kill.
type failover struct {
	expired time.Duration // until the observer heard of the leader node's deletion
	led     time.Duration // until the follower led
	heard   time.Duration // from the server's last read from the leader until the follower led
}

// A failoverSide is one side of BenchmarkFailover.
type failoverSide interface {
	name() string
	// path is the election's path.
	path() string
	// lead starts a leader process, killed when ctx ends, and returns once
	// it leads.
	lead(ctx context.Context, b *testing.B) *exec.Cmd
	// follow has the follower campaign; the channel receives the time it
	// leads.
	follow(ctx context.Context, b *testing.B) <-chan campaigned
	// resign ends the follower's term, if it does not end it itself.
	resign(ctx context.Context, b *testing.B, term *locks.Hold)
}

// killLeader runs one round of BenchmarkFailover on s.
func killLeader(b *testing.B, ctx context.Context, admin *zk.Conn, leaders *relay, s failoverSide) failover {
	b.Helper()
	leader := s.lead(ctx, b)
	names := waitChildren(b, admin, s.path(), 1)
	node := s.path() + "/" + names[0]
	led := s.follow(ctx, b)
	waitChildren(b, admin, s.path(), 2)
	time.Sleep(settle)
	ok, _, gone, err := admin.ExistsW(node)
	if err != nil || !ok {
		b.Fatalf("the leader's node %s: exists %v, %v", node, ok, err)
	}
	deleted := make(chan time.Time, 1)
	go func() {
		if ev := <-gone; ev.Type == zk.EventNodeDeleted {
			deleted <- time.Now()
		}
		close(deleted) // with no time, it was not the deletion
	}()
	time.Sleep(rand.N(killJitter))
	start := time.Now()
	if err := leader.Process.Kill(); err != nil {
		b.Fatal(err)
	}
	_ = leader.Wait() // "signal: killed"
	heard := leaders.lastHeard()
	timeout := time.NewTimer(failoverWait)
	defer timeout.Stop()
	var f failover
	var term *locks.Hold
	for deleted != nil || led != nil {
		select {
		case at, ok := <-deleted:
			if !ok {
				b.Fatalf("%s: the watch of the leader's node ended before its deletion", s.name())
			}
			f.expired, deleted = at.Sub(start), nil
		case r, ok := <-led:
			if !ok {
				b.Fatalf("%s: the follower is gone", s.name())
			}
			if r.err != nil {
				b.Fatalf("%s: the follower: %v", s.name(), r.err)
			}
			f.led, term, led = r.at.Sub(start), r.term, nil
		case <-timeout.C:
			b.Fatalf("%s: no fail-over %v after the kill", s.name(), failoverWait)
		}
	}
	f.heard = f.led + start.Sub(heard)
	s.resign(ctx, b, term)
	return f
}

// latchSide is ours: a child process leads, a Latch here follows.
type latchSide struct {
	dir      string
	exe      string
	leaders  string // the address the leaders connect to
	follower *election.Latch
}

// newLatchSide makes our side: leaders at path reach the server at
// leaders, the follower directly.
func newLatchSide(b *testing.B, path, leaders string) *latchSide {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	l, err := election.NewLatch(connectWith(b, recipes.WithSessionTimeout(failoverSession)), path, "go-follower")
	if err != nil {
		b.Fatal(err)
	}
	return &latchSide{dir: path, exe: exe, leaders: leaders, follower: l}
}

func (s *latchSide) name() string { return "latch" }
func (s *latchSide) path() string { return s.dir }

func (s *latchSide) lead(ctx context.Context, b *testing.B) *exec.Cmd {
	b.Helper()
	cmd := exec.CommandContext(ctx, s.exe)
	cmd.Env = append(os.Environ(), leaderEnv+"="+s.dir, zktest.ServersEnv+"="+s.leaders)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// Its stdin is a pipe that it reads to the end: should this process
	// die, the child ends too.
	if _, err := cmd.StdinPipe(); err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }) // if a round fails before its kill
	line, err := bufio.NewReader(out).ReadString('\n')
	if line != "leading\n" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		b.Fatalf("the leader printed %q (%v): %s", line, err, stderr.Bytes())
	}
	return cmd
}

func (s *latchSide) follow(ctx context.Context, _ *testing.B) <-chan campaigned {
	return campaign(ctx, s.follower)
}

func (s *latchSide) resign(ctx context.Context, b *testing.B, term *locks.Hold) {
	b.Helper()
	if err := term.Release(ctx); err != nil {
		b.Fatal(err)
	}
}

// runFailoverLeader is the test binary run as BenchmarkFailover's leader:
// it campaigns on a Latch at path, on a session with failoverSession to the
// servers of ZK_SERVERS, prints "leading" once it leads, and holds until
// its stdin ends (or it is killed, as it is meant to be). It returns the
// exit status.
func runFailoverLeader(path string) int {
	ctx, cancel := context.WithTimeout(context.Background(), connectWait)
	defer cancel()
	sess, err := recipes.Connect(ctx, strings.Split(os.Getenv(zktest.ServersEnv), ","), recipes.WithSessionTimeout(failoverSession))
	if err != nil {
		fmt.Fprintln(os.Stderr, "failover leader: connect:", err)
		return 1
	}
	defer sess.Close()
	l, err := election.NewLatch(sess, path, "go-leader")
	if err != nil {
		fmt.Fprintln(os.Stderr, "failover leader:", err)
		return 1
	}
	term, err := l.Campaign(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "failover leader: campaign:", err)
		return 1
	}
	fmt.Println("leading")
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = term.Release(context.Background())
	return 0
}
