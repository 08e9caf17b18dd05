package zktest

import (
	"testing"
	"time"

	"github.com/zkrecipes/recipes/internal/zkserver"
)

// SuperCredentials are the digest credentials ("user:password") of the
// super user of every server this package starts: a connection that adds
// them with AddAuth("digest", ...) reads and deletes any node, whatever its
// ACL. Root's cleanup uses them.
const SuperCredentials = "zktest:zktest"

// Option configures the servers that Start and StartEnsemble start.
type Option struct{ o zkserver.Option }

// WithConfig sets a zoo.cfg setting ("key", "value"), replacing the
// package's own for that key (for example "tickTime", "maxSessionTimeout").
func WithConfig(key, value string) Option {
	return Option{zkserver.WithConfig(key, value)}
}

// WithSystemProperty passes -Dkey=value to each server's JVM (for example
// "zookeeper.forceSync", "znode.container.checkIntervalMs").
func WithSystemProperty(key, value string) Option {
	return Option{zkserver.WithSystemProperty(key, value)}
}

// WithStartTimeout bounds how long a start waits for the servers to serve
// (a minute by default).
func WithStartTimeout(d time.Duration) Option {
	return Option{zkserver.WithStartTimeout(d)}
}

// WithPeerProxies makes an ensemble's members reach each other through
// proxies, so that Ensemble.Isolate can partition one from the others.
func WithPeerProxies() Option {
	return Option{zkserver.WithPeerProxies()}
}

func options(opts []Option) []zkserver.Option {
	var out []zkserver.Option
	for _, o := range opts {
		if o.o != nil { // the zero Option does nothing
			out = append(out, o.o)
		}
	}
	return out
}

// Server is a standalone ZooKeeper server that Start started.
//
// The server runs with a tickTime of 100 ms, so sessions may be as short as
// 200 ms; containers are reaped every 100 ms; writes are not synced to disk.
type Server struct {
	srv   *zkserver.Server
	front *front
}

// Start starts a standalone ZooKeeper server on loopback and waits until it
// serves. It is stopped and its files removed when tb's test ends; a server
// that cannot start fails the test, saying why.
func Start(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	srv, err := zkserver.Start(options(opts)...)
	if err != nil {
		tb.Fatalf("zktest: start ZooKeeper: %v", err)
	}
	f, err := newFront([]string{srv.Addr()})
	if err != nil {
		_ = srv.Close()
		tb.Fatalf("zktest: %v", err)
	}
	tb.Cleanup(func() {
		f.close()
		if err := srv.Close(); err != nil {
			tb.Errorf("zktest: stop ZooKeeper: %v", err)
		}
	})
	return &Server{srv: srv, front: f}
}

// Servers returns the server's address, as the list that zk.Connect and
// recipes.Connect take.
func (s *Server) Servers() []string { return []string{s.Addr()} }

// Addr returns the server's address, "127.0.0.1:port".
func (s *Server) Addr() string { return s.front.addr(0) }

// Stop kills the server (kill -9) and waits for it to exit: its clients
// lose their connections, and a new connection to its address is closed as
// soon as it is accepted, until Restart. Its data is kept.
func (s *Server) Stop() error { return s.srv.Stop() }

// Restart stops the server if it runs and starts it again on the same
// address with the same data, waiting until it serves. Sessions that have
// not expired meanwhile carry on.
func (s *Server) Restart() error { return s.srv.Restart() }

// RestartWith is Restart with zoo.cfg settings ("key=value") added or
// replacing those of the same keys: a server whose settings change under
// its clients, as in a rolling restart.
func (s *Server) RestartWith(settings ...string) error { return s.srv.RestartWith(settings...) }

// LogPath returns the path of the server's log.
func (s *Server) LogPath() string { return s.srv.LogPath() }

// Ensemble is a replicated ZooKeeper ensemble that StartEnsemble started.
// Its members are numbered from 0. It runs with the settings of a Server.
type Ensemble struct {
	e     *zkserver.Ensemble
	front *front
}

// reportLines is how many lines of each member's log a failed test shows.
const reportLines = 60

// StartEnsemble starts an ensemble of n servers on loopback and waits until
// every member serves and one leads. It is stopped and its files removed
// when tb's test ends; if the test failed, each member's state and the end
// of its log are logged first.
func StartEnsemble(tb testing.TB, n int, opts ...Option) *Ensemble {
	tb.Helper()
	e, err := zkserver.StartEnsemble(n, options(opts)...)
	if err != nil {
		tb.Fatalf("zktest: start ZooKeeper ensemble: %v", err)
	}
	addrs := make([]string, e.Len())
	for i := range addrs {
		addrs[i] = e.Addr(i)
	}
	f, err := newFront(addrs)
	if err != nil {
		_ = e.Close()
		tb.Fatalf("zktest: %v", err)
	}
	tb.Cleanup(func() {
		if tb.Failed() {
			// Cleanups run last in, first out: the test's own have run, and
			// a member that died shows here with its exit status.
			tb.Logf("zktest: the ensemble after the failure:\n%s", e.Report(reportLines))
		}
		f.close()
		if err := e.Close(); err != nil {
			tb.Errorf("zktest: stop ZooKeeper ensemble: %v", err)
		}
	})
	return &Ensemble{e: e, front: f}
}

// Servers returns every member's address, the list zk.Connect and
// recipes.Connect take.
func (e *Ensemble) Servers() []string {
	out := make([]string, e.Len())
	for i := range out {
		out[i] = e.Addr(i)
	}
	return out
}

// Addr returns member i's address.
func (e *Ensemble) Addr(i int) string { return e.front.addr(i) }

// Len returns the number of members.
func (e *Ensemble) Len() int { return e.e.Len() }

// MemberOf returns the member that a connection of the session with the
// given id goes to now (Curator's TestingCluster.findConnectionInstance),
// or false if it has none through this ensemble's addresses.
func (e *Ensemble) MemberOf(sessionID int64) (int, bool) {
	return sessions.member(sessionID, e.front)
}

// Leader returns the member that leads now, or -1 if none does (isolated
// members left out).
func (e *Ensemble) Leader() int { return e.e.Leader() }

// Followers returns the members that follow now (stopped and isolated ones
// left out).
func (e *Ensemble) Followers() []int { return e.e.Followers() }

// Stop kills member i (kill -9) and waits for it to exit; its clients lose
// their connections and move to other members, and a new connection to its
// address is closed as soon as it is accepted. Its data is kept.
func (e *Ensemble) Stop(i int) error { return e.e.Stop(i) }

// Start starts member i again after Stop, and, if a majority then runs,
// waits until every running member serves and member i has applied what
// the leader had: killing the leader while a member still takes its
// leader's diff can leave that member inconsistent for good in ZooKeeper
// 3.8.0.
func (e *Ensemble) Start(i int) error { return e.e.Start(i) }

// Restart stops and starts member i.
func (e *Ensemble) Restart(i int) error { return e.e.Restart(i) }

// Launch starts member i again after Stop and returns at once, without
// waiting for it to serve or to catch up, as a careless operator's rolling
// restart moves on to the next member: what Start guards against.
func (e *Ensemble) Launch(i int) error { return e.e.Launch(i) }

// Pause freezes member i (SIGSTOP), as a long garbage collection or a
// descheduled machine would: its connections stay open and nothing
// answers. Resume continues it. Not on Windows, which has no SIGSTOP.
func (e *Ensemble) Pause(i int) error { return e.e.Pause(i) }

// Resume continues member i after Pause.
func (e *Ensemble) Resume(i int) error { return e.e.Resume(i) }

// Isolate partitions member i from the other members (its clients still
// reach it): as a network partition, bytes are held, not refused. It needs
// WithPeerProxies. Heal ends it.
func (e *Ensemble) Isolate(i int) error { return e.e.Isolate(i) }

// Heal ends Isolate(i). It does not wait for member i to rejoin: WaitQuorum
// does.
func (e *Ensemble) Heal(i int) error { return e.e.Heal(i) }

// WaitQuorum waits until every running member that is not isolated serves
// and exactly one of them leads.
func (e *Ensemble) WaitQuorum() error { return e.e.WaitQuorum() }

// LogPath returns the path of member i's log.
func (e *Ensemble) LogPath(i int) string { return e.e.LogPath(i) }
