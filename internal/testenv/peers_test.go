package testenv

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/zkserver"
	"github.com/zkrecipes/recipes/zktest"
)

// Isolation timing for TestEnsembleIsolate: an isolated follower notices
// after syncLimit×tickTime; a session shorter than that, held through the
// isolated follower, is expired by the leader while the follower still
// answers its pings (issue 8, §3).
const (
	isoTick     = 200 * time.Millisecond
	isoSync     = 25 // the follower drops its clients 4 s after the leader expires isoSession
	isoNotice   = isoSync * isoTick
	isoSession  = time.Second
	isoDeadline = 30 * time.Second
)

// waitFor polls cond every 20ms until it holds or isoDeadline passes.
func waitFor(t *testing.T, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Since(start) > isoDeadline {
			t.Fatalf("timed out after %v waiting for %s", isoDeadline, what)
		}
		<-tick.C
	}
	return time.Since(start)
}

// answeredMode asks member i for its mode until it answers: srvr answers
// within a second on an idle machine, not on a loaded one.
func answeredMode(t *testing.T, e *zkserver.Ensemble, i int) string {
	t.Helper()
	var mode string
	waitFor(t, fmt.Sprintf("member %d to answer srvr", i), func() bool {
		var err error
		mode, err = e.Mode(i)
		return err == nil
	})
	return mode
}

// aFollower returns a member that reports Mode follower, once one does.
func aFollower(t *testing.T, e *zkserver.Ensemble) int {
	t.Helper()
	var fs []int
	waitFor(t, "a follower", func() bool {
		fs = e.Followers()
		return len(fs) > 0
	})
	return fs[0]
}

func others(e *zkserver.Ensemble, i int) []string {
	var out []string
	for j, a := range e.Servers() {
		if j != i {
			out = append(out, a)
		}
	}
	return out
}

func TestEnsembleIsolate(t *testing.T) {
	t.Parallel()
	e := startEnsemble(t, 3, zkserver.WithPeerProxies(),
		WithConfig("tickTime", fmt.Sprint(isoTick.Milliseconds())),
		WithConfig("syncLimit", fmt.Sprint(isoSync)))

	t.Run("follower", func(t *testing.T) {
		f := aFollower(t, e)
		majority := zktest.Connect(t, others(e, f))
		if _, err := majority.Create("/iso", []byte("1"), 0, acl); err != nil {
			t.Fatalf("create: %v", err)
		}
		// A client of the follower only, with a session longer than the
		// test so that only the follower's fate shows.
		fconn, fevents := ConnectSession(t, []string{e.Addr(f)}, 30*time.Second)
		if _, err := fconn.Sync("/iso"); err != nil {
			t.Fatalf("sync: %v", err)
		}
		// A short session through the follower, and a watch on its
		// ephemeral node from the majority side.
		sconn, sevents := ConnectSession(t, []string{e.Addr(f)}, isoSession)
		if _, err := sconn.Create("/iso-eph", nil, zk.FlagEphemeral, acl); err != nil {
			t.Fatalf("create ephemeral: %v", err)
		}
		if _, err := majority.Sync("/iso-eph"); err != nil {
			t.Fatalf("sync: %v", err)
		}
		ok, _, gone, err := majority.ExistsW("/iso-eph")
		if err != nil || !ok {
			t.Fatalf("existsw = %v, %v", ok, err)
		}

		start := time.Now()
		if err := e.Isolate(f); err != nil {
			t.Fatal(err)
		}
		// A failure before Heal must not leave the next subtest a minority.
		t.Cleanup(func() { _ = e.Heal(f); _ = e.WaitQuorum() })
		if !e.Isolated(f) {
			t.Fatal("Isolated = false")
		}
		// The others keep a quorum and take writes.
		if _, err := majority.Set("/iso", []byte("2"), -1); err != nil {
			t.Fatalf("write to the majority: %v", err)
		}
		// The follower still serves, from its stale state.
		if data, _, err := fconn.Get("/iso"); err != nil || string(data) != "1" {
			t.Fatalf("isolated follower read = %q, %v; want the stale %q", data, err, "1")
		}
		if err := e.WaitQuorum(); err != nil {
			t.Fatalf("quorum without the isolated member: %v", err)
		}
		// The leader expires the short session, whose pings the follower
		// no longer relays, while its client still looks connected.
		if ev := waitOrFatal(t, gone, "the leader to expire the short session"); ev.Type != zk.EventNodeDeleted {
			t.Fatalf("event = %+v", ev)
		}
		expired := time.Since(start)
		for _, ev := range append(sevents.All(), fevents.All()...) {
			if ev.State == zk.StateDisconnected || ev.State == zk.StateExpired {
				t.Fatalf("a client of the isolated follower saw %v before the leader expired the session %v after Isolate",
					ev.State, expired)
			}
		}
		t.Logf("leader expired the %v session %v after Isolate; its client still connected", isoSession, expired)
		// Then the follower gives up on the leader, drops its clients and
		// stops serving.
		fevents.WaitStateT(t, zk.StateDisconnected, isoDeadline)
		dropped := time.Since(start)
		waitFor(t, "the isolated follower to stop serving", func() bool {
			_, err := e.Mode(f)
			return err != nil
		})
		t.Logf("isolated follower dropped its clients %v after Isolate (syncLimit×tickTime = %v)", dropped, isoNotice)
		if dropped < isoNotice-isoTick {
			t.Errorf("isolated follower gave up after %v, before syncLimit×tickTime = %v", dropped, isoNotice)
		}

		healed := time.Now()
		if err := e.Heal(f); err != nil {
			t.Fatal(err)
		}
		if err := e.WaitQuorum(); err != nil {
			t.Fatalf("rejoin after Heal: %v", err)
		}
		t.Logf("healed follower serving again %v after Heal", time.Since(healed))
		if mode := answeredMode(t, e, f); mode != "follower" {
			t.Fatalf("healed member mode = %q", mode)
		}
		fevents.WaitStateT(t, zk.StateHasSession, isoDeadline)
		if _, err := fconn.Sync("/iso"); err != nil {
			t.Fatalf("sync: %v", err)
		}
		if data, _, err := fconn.Get("/iso"); err != nil || string(data) != "2" {
			t.Fatalf("healed follower read = %q, %v; want %q", data, err, "2")
		}
	})

	t.Run("leader", func(t *testing.T) {
		l := e.Leader()
		if l < 0 {
			t.Fatal("no leader")
		}
		start := time.Now()
		if err := e.Isolate(l); err != nil {
			t.Fatal(err)
		}
		// A failure before Heal must not leave the next subtest a minority.
		t.Cleanup(func() { _ = e.Heal(l); _ = e.WaitQuorum() })
		// The other two elect a new leader among themselves.
		if err := e.WaitQuorum(); err != nil {
			t.Fatalf("quorum without the isolated leader: %v", err)
		}
		if nl := e.Leader(); nl < 0 || nl == l {
			t.Fatalf("leader while %d is isolated = %d", l, nl)
		}
		t.Logf("new leader serving %v after Isolate", time.Since(start))
		majority := zktest.Connect(t, others(e, l))
		if _, err := majority.Set("/iso", []byte("3"), -1); err != nil {
			t.Fatalf("write to the majority: %v", err)
		}
		waitFor(t, "the isolated leader to stop serving", func() bool {
			_, err := e.Mode(l)
			return err != nil
		})
		if err := e.Heal(l); err != nil {
			t.Fatal(err)
		}
		if err := e.WaitQuorum(); err != nil {
			t.Fatalf("rejoin after Heal: %v", err)
		}
		if mode := answeredMode(t, e, l); mode != "follower" {
			t.Fatalf("healed old leader mode = %q", mode)
		}
	})

	t.Run("pause", func(t *testing.T) {
		f := aFollower(t, e)
		pid := e.PID(f)
		if err := e.Pause(f); err != nil {
			t.Fatal(err)
		}
		// SIGSTOP is asynchronous, but a stopped JVM answers nothing.
		waitFor(t, "the paused member to stop answering", func() bool {
			_, err := e.Mode(f)
			return err != nil
		})
		if err := e.Resume(f); err != nil {
			t.Fatal(err)
		}
		if err := e.WaitQuorum(); err != nil {
			t.Fatalf("quorum after Resume: %v", err)
		}
		if e.PID(f) != pid {
			t.Fatal("PID changed across Pause/Resume")
		}
	})

	t.Run("kill", func(t *testing.T) {
		l := e.Leader()
		if l < 0 {
			t.Fatal("no leader")
		}
		if err := e.Stop(l); err != nil {
			t.Fatal(err)
		}
		if e.PID(l) != 0 {
			t.Fatal("PID of a stopped member != 0")
		}
		if err := e.WaitQuorum(); err != nil {
			t.Fatalf("quorum after killing the leader: %v", err)
		}
		if err := e.Start(l); err != nil {
			t.Fatalf("restart: %v", err)
		}
		if !slices.Contains(e.Followers(), l) {
			t.Fatalf("restarted member %d not among followers %v", l, e.Followers())
		}
		conn := zktest.Connect(t, []string{e.Addr(l)})
		if _, err := conn.Sync("/iso"); err != nil {
			t.Fatalf("sync: %v", err)
		}
		if data, _, err := conn.Get("/iso"); err != nil || string(data) != "3" {
			t.Fatalf("restarted member read = %q, %v", data, err)
		}
	})
}
