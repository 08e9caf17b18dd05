package bench_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/testenv"
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
// settle), as a per cent of one core. "none" is the server alone,
// "zk.Conn" go-zookeeper connections, "session" recipes.Sessions that
// hold nothing and wait for nothing. Each call measures one window,
// whatever b.N.
func BenchmarkIdleSessions(b *testing.B) {
	runInTurn(b,
		sub{"none", func(b *testing.B) { idle(b, nil) }},
		sub{"zk.Conn", func(b *testing.B) { idle(b, dialConn) }},
		sub{"session", func(b *testing.B) { idle(b, dialSession) }},
	)
}

// idle opens idleSessions with dial (none if nil) on a server of their own
// and reports the server's CPU over the window.
func idle(b *testing.B, dial func(servers []string) (io.Closer, error)) {
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
	open := make([]io.Closer, idleSessions)
	defer func() {
		for _, c := range open {
			if c != nil {
				_ = c.Close()
			}
		}
	}()
	if dial != nil {
		// A Session's first proof of life takes 0.6 tickTime: connect
		// a few dozen at a time.
		var g errgroup.Group
		g.SetLimit(50)
		for i := range open {
			g.Go(func() (err error) {
				open[i], err = dial(srv.Servers())
				return err
			})
		}
		if err := g.Wait(); err != nil {
			b.Fatal(err)
		}
	}
	time.Sleep(idleSettle) // the connects' own work done, before the window
	b.ResetTimer()
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

// dialConn opens a go-zookeeper connection and waits for its session.
func dialConn(servers []string) (io.Closer, error) {
	conn, err := plainConn(servers)
	if err != nil {
		return nil, err
	}
	return closer(conn.Close), nil
}

// dialSession opens a recipes.Session.
func dialSession(servers []string) (io.Closer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), connectWait)
	defer cancel()
	sess, err := recipes.Connect(ctx, servers, recipes.WithSessionTimeout(10*time.Second))
	if err != nil {
		return nil, err
	}
	return closer(func() { _ = sess.Close() }), nil
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
