package zkserver

import (
	"net"
	"strconv"
	"testing"
)

func TestFreePortsAvoidTheEphemeralRange(t *testing.T) {
	lo, hi := ephemeralRange()
	ports, err := freePorts(30)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p >= lo && p <= hi {
			t.Errorf("port %d is in the ephemeral range %d-%d", p, lo, hi)
		}
		if p < lowestPort {
			t.Errorf("port %d is below %d", p, lowestPort)
		}
		if seen[p] {
			t.Errorf("port %d chosen twice", p)
		}
		seen[p] = true
		// Released: a server can bind it on every address.
		l, err := net.Listen("tcp4", "0.0.0.0:"+strconv.Itoa(p))
		if err != nil {
			t.Errorf("port %d not free after freePorts: %v", p, err)
			continue
		}
		l.Close()
	}
}

func TestCandidatePortsLieOutsideTheEphemeralRange(t *testing.T) {
	lo, hi, ok := candidatePorts()
	if !ok {
		t.Fatal("no candidate ports")
	}
	elo, ehi := ephemeralRange()
	if lo < lowestPort || hi > 65535 || lo > hi || (lo <= ehi && hi >= elo) {
		t.Fatalf("candidates %d-%d overlap the ephemeral range %d-%d or leave %d-65535", lo, hi, elo, ehi, lowestPort)
	}
}

// TestEnsembleStartRefusesAMemberThatCannotBind takes member 3's election
// port before its JVM binds it, as an outgoing connection's local port
// could. ZooKeeper retries that bind in a thread of its own and exits
// seconds later, often after the quorum has formed: the start must fail,
// with the log that tells StartEnsemble to try again with new ports,
// rather than hand out an ensemble about to lose a member.
func TestEnsembleStartRefusesAMemberThatCannotBind(t *testing.T) {
	if err := EnsureInstalled(); err != nil {
		t.Fatal(err)
	}
	ports, err := freePorts(9)
	if err != nil {
		t.Fatal(err)
	}
	taken, err := net.Listen("tcp4", "0.0.0.0:"+strconv.Itoa(ports[8]))
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	go func() {
		for {
			c, err := taken.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	e := &Ensemble{cfg: newConfig(nil), dir: t.TempDir()}
	t.Cleanup(func() { _ = e.Close() })
	err = e.startFresh(ports)
	if err == nil {
		t.Fatal("startFresh succeeded with member 3's election port taken")
	}
	if !portInUse(e.members[2].logPath) {
		t.Fatalf("startFresh failed, but not on the taken port: %v", err)
	}
	for _, m := range e.members {
		if m.proc != nil {
			t.Errorf("server %d left running after the failed start", m.id)
		}
	}
}
