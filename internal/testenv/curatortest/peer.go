// Package curatortest runs CuratorPeer, a small Java program built on the
// real Apache Curator 5.x recipes from Debian (libcurator-recipes-java), so
// that tests can make Go and Java processes contend for the same ZooKeeper
// paths. The Java source is embedded; Ensure installs the package if needed
// and compiles the source once into a cache shared by later runs.
//
// CuratorPeer's modes (the first argument) are:
//
//	mutex|read|write|semaphore-mutex SERVERS PATH ITER HOLD_MS LOG CLIENT
//	multilock SERVERS PATH1,PATH2[,...] ITER HOLD_MS LOG CLIENT
//	semaphore SERVERS PATH MAX ITER HOLD_MS LOG CLIENT
//	barrier-set|barrier-remove SERVERS PATH
//	barrier-wait SERVERS PATH TIMEOUT_MS        (prints "passed", or exits 3)
//	double-barrier SERVERS PATH MEMBERS LOG CLIENT
//	revoke SERVERS NODEPATH                     (Revoker.attemptRevoke)
//	latch|selector SERVERS PATH ITER HOLD_MS LOG CLIENT
//	leader SERVERS PATH latch|selector          (prints "leader ID", or "none")
//	bench-mutex SERVERS PATH CLIENTS SECONDS
//	bench-rw SERVERS PATH CLIENTS SECONDS READ_PERCENT
//	bench-capacity SERVERS ROOT PATHS CLIENTS SECONDS
//	bench-semaphore SERVERS PATH MAX CLIENTS SECONDS
//	bench-double-barrier SERVERS PATH MEMBERS ROUNDS
//	bench-latch-follow SERVERS PATH ID
//	bench-latch-handoff SERVERS PATH ROUNDS
//	bench-selector-handoff SERVERS PATH ROUNDS
//	soak-mutex SERVERS PATHS STORE TIMELINE THREADS HOLD_MS PACE_MS WATCH
//	version                                     (prints "curator=V zookeeper=V")
//
// SERVERS is a comma-separated host:port list (see ServersArg).
// soak-mutex is a worker of the soak's comparison (tests/chaos): THREADS
// threads on InterProcessMutexes over PATHS, reading and writing the soak's
// store at STORE as Curator's users write (no token), logging to the soak's
// TIMELINE, following the WATCH nodes ("-": none) with CuratorCaches, until
// its standard input ends (SoakWorker.java says more). The lock
// modes take the lock ITER times, appending "+ KIND CLIENT" to the
// eventlog file LOG right after acquiring and "- KIND CLIENT" right before
// releasing, with HOLD_MS in between; KIND is M (mutex, semaphore-mutex,
// multilock), R, W or L (semaphore lease). double-barrier logs "+ B" after
// enter and "- B" before leave; latch and selector lead as CLIENT (the
// participant's id) and log kind E.
//
// bench-mutex, bench-rw and bench-semaphore run CLIENTS threads, each with
// its own Curator client and lock, acquiring and releasing for SECONDS after
// a second's warm-up, and print "ops=N seconds=S all=M" (M counting the
// warm-up too); bench-capacity the same on a mutex of one of PATHS paths
// (ROOT/lock-000, ROOT/lock-001, ...) at random for each acquisition;
// bench-double-barrier prints its rounds' mean
// time as "seconds=S". bench-latch-follow campaigns on a LeaderLatch as ID
// once per line it reads on stdin, prints "leader" as soon as it leads,
// then resigns, until stdin ends. bench-latch-handoff has two participants
// take turns to lead a LeaderLatch, each resigning once the other is queued
// behind it, and prints the time from each resignation until the other
// leads as "ns=N,N,..." (ROUNDS of them, after 20 not counted);
// bench-selector-handoff the same with two LeaderSelectors, from the end of
// one's takeLeadership until the other's is called. The option
// --session-ms=N, before the mode, sets every client's session timeout.
//
// Every mode closes its Curator clients before exiting, also when stopped by
// SIGTERM (what Command sends when its context ends), so its ephemeral nodes
// go at once. Exit status 0 is success, 1 a failure (described on stderr), 2
// bad arguments.
package curatortest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// MainClass is the Java class Command runs.
const MainClass = "CuratorPeer"

// A Peer runs CuratorPeer with the right class path. It is safe for
// concurrent use.
type Peer struct {
	java      string   // the java binary
	classPath string   // the compiled class directory, then the jars
	jvmFlags  []string // flags before the class name
}

var ensured struct {
	once sync.Once
	peer *Peer
	err  error
}

// Ensure returns a Peer ready to run. The first call in a process installs
// Debian's libcurator-recipes-java with apt-get if
// /usr/share/java/curator-recipes.jar is missing, and compiles the embedded
// CuratorPeer.java with javac unless an earlier run (of any process) left the
// classes in the cache (see CacheDir). Later calls return the first call's
// result.
func Ensure() (*Peer, error) {
	ensured.once.Do(func() {
		ensured.peer, ensured.err = ensure()
	})
	return ensured.peer, ensured.err
}

// EnsureT is Ensure that fails t if the peer cannot be made ready.
func EnsureT(t testing.TB) *Peer {
	t.Helper()
	p, err := Ensure()
	if err != nil {
		t.Fatalf("curatortest: %v", err)
	}
	return p
}

func ensure() (*Peer, error) {
	if err := ensureInstalled(); err != nil {
		return nil, err
	}
	jars, err := classPathJars()
	if err != nil {
		return nil, err
	}
	java, err := jdkTool("java")
	if err != nil {
		return nil, err
	}
	classes, err := compile(jars)
	if err != nil {
		return nil, err
	}
	return &Peer{
		java:      java,
		classPath: strings.Join(append([]string{classes}, jars...), string(os.PathListSeparator)),
		jvmFlags: []string{
			"-XX:+UseSerialGC",
			"-XX:-UsePerfData",
			"-XX:+ExitOnOutOfMemoryError",
			"-Xss512k",
			"-Djava.awt.headless=true",
		},
	}, nil
}

// ClassPath returns the class path Command uses: the compiled classes, then
// the jars.
func (p *Peer) ClassPath() string { return p.classPath }

// Command returns an unstarted "java -cp ... CuratorPeer args..." command.
// Its Stdout and Stderr are left for the caller to set. When ctx ends, the
// process is sent SIGTERM, on which CuratorPeer closes its clients (so their
// ephemeral nodes go at once) and exits; it is killed if it has not exited
// 10 seconds later. On Linux it is also killed if the calling process dies.
func (p *Peer) Command(ctx context.Context, args ...string) *exec.Cmd {
	argv := append([]string{}, p.jvmFlags...)
	mode := "" // the first argument that is not an option (--session-ms=N)
	for _, a := range args {
		if !strings.HasPrefix(a, "--") {
			mode = a
			break
		}
	}
	if !strings.HasPrefix(mode, "bench-") {
		// Short runs: the C1 compiler alone starts faster. Benchmarks keep
		// the default tiered compilation, as a Java service would.
		argv = append(argv, "-XX:TieredStopAtLevel=1")
	}
	argv = append(argv, "-cp", p.classPath, MainClass)
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, p.java, argv...)
	cmd.Cancel = func() error { return terminate(cmd.Process) }
	cmd.WaitDelay = 10 * time.Second
	cmd.SysProcAttr = sysProcAttr()
	return cmd
}

// Run runs CuratorPeer with args and returns what it printed on stdout. If it
// fails, the error includes the arguments, the exit status and the end of its
// stderr.
func (p *Peer) Run(ctx context.Context, args ...string) (stdout string, err error) {
	cmd := p.Command(ctx, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = fmt.Errorf("%w (%w)", err, ctxErr)
		}
		return out.String(), fmt.Errorf("curatortest: CuratorPeer %s: %w\n%s",
			strings.Join(args, " "), err, tail(errOut.Bytes(), 30))
	}
	return out.String(), nil
}

// ServersArg formats servers as the SERVERS argument: "h1:p1,h2:p2".
func ServersArg(servers []string) string { return strings.Join(servers, ",") }

// ClientID returns an event-log client id for the n-th Java process started
// by this Go process: "java-<pid of this process>-<n>".
func ClientID(n int) string { return fmt.Sprintf("java-%d-%d", os.Getpid(), n) }

// ExitCode returns the exit status of a failed Run or Command, or -1 if err
// does not come from a process that exited (it was killed by a signal, or
// never started).
func ExitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// tail returns the last n lines of b.
func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
