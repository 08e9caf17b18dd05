package bench_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"golang.org/x/sync/errgroup"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/internal/testenv/curatortest"
	"github.com/zkrecipes/recipes/locks"
)

// What BenchmarkIdleSessions opens and how long it watches the server.
// ZKBENCH_IDLE_WINDOW sets the window (a Go duration).
const (
	idleSessions = 300
	idleSettle   = 5 * time.Second  // after the last connect, before the window
	idleWindow   = 30 * time.Second // the default window
	idleEnv      = "ZKBENCH_IDLE_WINDOW"
)

// BenchmarkIdleSessions measures what sessions that do nothing cost the
// server: 300 of them, with a session timeout of 10 s, connect (50 at a
// time) to a server of their own and are left idle; server-%cpu is the
// server's CPU time over the window that follows (30 s, after 5 s to
// settle), as a per cent of one core, and server-kib/session the server's
// heap, after a full collection, per session. "none" is the server alone,
// "zk.Conn" go-zookeeper connections, "session" recipes.Sessions that
// hold nothing and wait for nothing, "session-no-idle-probes" the same with
// WithoutIdleProbes, "curator" CuratorFrameworks (the Java peer's
// bench-sessions, one JVM for all). Each call measures one window,
// whatever b.N.
func BenchmarkIdleSessions(b *testing.B) {
	runInTurn(b,
		sub{"none", func(b *testing.B) { sessionsCost(b, nil) }},
		sub{"zk.Conn", func(b *testing.B) { sessionsCost(b, openEach(dialConn)) }},
		sub{"session", func(b *testing.B) { sessionsCost(b, openEach(dialSession(false))) }},
		sub{"session-no-idle-probes", func(b *testing.B) {
			sessionsCost(b, openEach(dialSession(false, recipes.WithoutIdleProbes())))
		}},
		sub{"curator", func(b *testing.B) { sessionsCost(b, openCurator(false)) }},
	)
}

// BenchmarkHoldingSessions is BenchmarkIdleSessions with each session
// holding a lock of its own: "zk.Lock" go-zookeeper's, "mutex" a
// locks.Mutex, "curator" an InterProcessMutex.
func BenchmarkHoldingSessions(b *testing.B) {
	runInTurn(b,
		sub{"zk.Lock", func(b *testing.B) { sessionsCost(b, openEach(dialZKLock)) }},
		sub{"mutex", func(b *testing.B) { sessionsCost(b, openEach(dialSession(true))) }},
		sub{"curator", func(b *testing.B) { sessionsCost(b, openCurator(true)) }},
	)
}

// An opener opens idleSessions sessions on servers, and returns what closes
// them all.
type opener func(b *testing.B, servers []string) (closeAll func())

// openEach opens each session with dial, 50 at a time: a Session's first
// proof of life takes 0.6 tickTime. dial is given the session's number.
func openEach(dial func(servers []string, i int) (io.Closer, error)) opener {
	return func(b *testing.B, servers []string) func() {
		open := make([]io.Closer, idleSessions)
		closeAll := func() {
			for _, c := range open {
				if c != nil {
					_ = c.Close()
				}
			}
		}
		var g errgroup.Group
		g.SetLimit(50)
		for i := range open {
			g.Go(func() (err error) {
				open[i], err = dial(servers, i)
				return err
			})
		}
		if err := g.Wait(); err != nil {
			closeAll()
			b.Fatal(err)
		}
		return closeAll
	}
}

// openCurator opens the sessions in the Java peer, each holding a mutex of
// its own if hold.
func openCurator(hold bool) opener {
	return func(b *testing.B, servers []string) func() {
		peer := curatortest.EnsureT(b)
		holdArg := "0"
		if hold {
			holdArg = "1"
		}
		cmd := peer.Command(context.Background(), "bench-sessions", strings.Join(servers, ","), "/bench-sessions",
			strconv.Itoa(idleSessions), holdArg)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		closeAll := func() {
			_ = stdin.Close()
			_ = cmd.Wait()
		}
		lines := bufio.NewScanner(stdout)
		if !lines.Scan() || lines.Text() != "ready" {
			closeAll()
			b.Fatalf("Curator peer: %q, not ready", lines.Text())
		}
		go func() { _, _ = io.Copy(io.Discard, stdout) }()
		return closeAll
	}
}

// sessionsCost opens idleSessions with open (none if nil) on a server of
// their own and reports the server's CPU over the window, and its heap per
// session.
func sessionsCost(b *testing.B, open opener) {
	window := idleWindow
	if v := os.Getenv(idleEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			b.Fatalf("%s=%q: want a duration such as 30s", idleEnv, v)
		}
		window = d
	}
	srv, err := testenv.Start(testenv.WithConfig("forceSync", "yes"), testenv.WithSystemProperty("zookeeper.forceSync", "yes"))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = srv.Close() }()
	heap0, err := heapUsed(srv.PID())
	if err != nil {
		b.Fatal(err)
	}
	if open != nil {
		defer open(b, srv.Servers())()
	}
	time.Sleep(idleSettle) // the connects' own work done, before the window
	heap1, err := heapUsed(srv.PID())
	if err != nil {
		b.Fatal(err)
	}
	time.Sleep(time.Second) // the collection's own work done
	b.ResetTimer()          // which drops metrics reported before it
	if open != nil {
		b.ReportMetric(float64(heap1-heap0)/1024/idleSessions, "server-kib/session")
	}
	before, err := cpuTime(srv.PID())
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	time.Sleep(window) // the window measured
	after, err := cpuTime(srv.PID())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(100*(after-before).Seconds()/time.Since(start).Seconds(), "server-%cpu")
}

// heapUsed returns the bytes in use on the heap of the JVM pid after a full
// collection, as jcmd's GC.heap_info tells them ("used 12345K"), summed
// over the generations.
func heapUsed(pid int) (int64, error) {
	jcmd := func(args ...string) (string, error) {
		out, err := exec.Command("jcmd", append([]string{strconv.Itoa(pid)}, args...)...).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("jcmd %v: %w: %s", args, err, out)
		}
		return string(out), nil
	}
	if _, err := jcmd("GC.run"); err != nil {
		return 0, err
	}
	out, err := jcmd("GC.heap_info")
	if err != nil {
		return 0, err
	}
	// One line per generation or region kind ("def new generation
	// total 4928K, used 2015K", "tenured generation ...", or G1's one
	// heap line), then Metaspace's, which is not the heap.
	var kib int64
	found := false
	for line := range strings.SplitSeq(out, "\n") {
		m := heapUsedRE.FindStringSubmatch(line)
		if m == nil || strings.Contains(line, "Metaspace") || strings.Contains(line, "class space") {
			continue
		}
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			return 0, err
		}
		kib += n
		found = true
	}
	if !found {
		return 0, fmt.Errorf("jcmd GC.heap_info: no \"used NK\" in %q", out)
	}
	return kib * 1024, nil
}

var heapUsedRE = regexp.MustCompile(`used (\d+)K`)

// dialConn opens a go-zookeeper connection and waits for its session.
func dialConn(servers []string, _ int) (io.Closer, error) {
	conn, err := plainConn(servers)
	if err != nil {
		return nil, err
	}
	return closer(conn.Close), nil
}

// dialZKLock opens a go-zookeeper connection that holds zk.Lock i.
func dialZKLock(servers []string, i int) (io.Closer, error) {
	conn, err := plainConn(servers)
	if err != nil {
		return nil, err
	}
	l := zk.NewLock(conn, fmt.Sprintf("/bench-sessions/lock-%03d", i), acl)
	if err := l.Lock(); err != nil {
		conn.Close()
		return nil, err
	}
	return closer(func() {
		_ = l.Unlock()
		conn.Close()
	}), nil
}

// dialSession returns a dial that opens a recipes.Session with opts, which
// holds a locks.Mutex of its own if hold.
func dialSession(hold bool, opts ...recipes.Option) func(servers []string, i int) (io.Closer, error) {
	return func(servers []string, i int) (io.Closer, error) {
		ctx, cancel := context.WithTimeout(context.Background(), connectWait)
		defer cancel()
		sess, err := recipes.Connect(ctx, servers, append([]recipes.Option{recipes.WithSessionTimeout(10 * time.Second)}, opts...)...)
		switch {
		case err != nil:
			return nil, err
		case !hold:
			return closer(func() { _ = sess.Close() }), nil
		}
		m, err := locks.NewMutex(sess, fmt.Sprintf("/bench-sessions/lock-%03d", i))
		if err != nil {
			_ = sess.Close()
			return nil, err
		}
		held, err := m.Lock(ctx)
		if err != nil {
			_ = sess.Close()
			return nil, err
		}
		return closer(func() {
			_ = held.Release(context.Background())
			_ = sess.Close()
		}), nil
	}
}

type closer func()

func (c closer) Close() error { c(); return nil }

// cpuTime returns the CPU time, user and system, that process pid and its
// threads have used: fields 14 and 15 of /proc/pid/stat, in the kernel's
// USER_HZ ticks of 10 ms.
func cpuTime(pid int) (time.Duration, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces;
	// the fields after it start with the state, field 3.
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the name", pid, len(fields))
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}
