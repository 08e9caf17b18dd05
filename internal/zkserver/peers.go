package zkserver

import (
	"errors"
	"fmt"
	"strconv"
)

// WithPeerProxies makes StartEnsemble route every server-to-server
// connection through a TCPProxy, one per directed link and port (quorum and
// election), so that Isolate can partition a member from the others while
// its client port stays reachable. Standalone servers ignore it.
//
// How it is wired, and why it holds: each member binds its own quorum and
// election ports on 0.0.0.0 ("server.N=0.0.0.0:q:e" for itself), and its
// zoo.cfg names every peer by the address of the proxy for the link from
// it to that peer. ZooKeeper dials peers only through its own config: a
// follower finds the leader's quorum address in its own view, and the
// election's connection manager (QuorumCnxManager), where the higher sid
// drops a connection from a lower one and dials back, dials back to the
// address the lower one announced unless that address is a wildcard, in
// which case it uses its own view. Announcing 0.0.0.0 therefore sends the
// dial-back through a proxy too, and no server-to-server byte bypasses the
// proxies. The members' own config versions agree (all 0), so no member
// adopts another's view of the addresses. Binding 0.0.0.0 makes those two
// ports reachable from other hosts while the ensemble runs; client ports
// stay on 127.0.0.1.
//
// Isolating a follower, as the fault suite's §3 scenario needs, shows this
// sequence (tickTime and syncLimit are set with WithConfig; the harness
// defaults are tickTime=100 and syncLimit=50):
//   - The follower keeps serving its clients (pings, reads) from its own,
//     now stale, state: it notices the leader is gone only when its read
//     of the leader times out, syncLimit×tickTime after the last packet it
//     got (measured: 2.0s after Isolate with tickTime=200ms, syncLimit=10).
//   - It then stops serving: it closes its client connections and "srvr"
//     says it is not serving, until Heal lets it rejoin (measured: serving
//     again 70-160ms after Heal).
//   - The leader stops counting sessions of the isolated follower's clients
//     as alive (the follower relays their pings to the leader, and now
//     cannot), so it expires them after their session timeout T, rounded
//     up to a tickTime (measured: 1.1s after Isolate for T=1s).
//
// So a session on the isolated follower is expired by the leader while the
// follower still answers its pings if T < syncLimit×tickTime; choose for
// instance tickTime=200ms, syncLimit=25 (5s) and T=4s to reproduce it, and
// syncLimit×tickTime well below T to see the follower drop its clients
// first. minSessionTimeout (harness default 200ms) and maxSessionTimeout
// (60s) bound T and can be set with WithConfig too.
//
// Isolating the leader: the followers notice the same way, after
// syncLimit×tickTime, and elect a new leader among themselves (measured:
// serving 2.3s after Isolate with the settings above); the isolated leader
// steps down when it loses its quorum and stops serving.
func WithPeerProxies() Option {
	return func(c *config) { c.peerProxies = true }
}

// peerLink is the pair of proxies through which one member reaches another.
type peerLink struct {
	quorum, election *TCPProxy
}

func newPeerLink(to *member) (*peerLink, error) {
	q, err := NewTCPProxy("127.0.0.1:" + strconv.Itoa(to.peerPort))
	if err != nil {
		return nil, err
	}
	el, err := NewTCPProxy("127.0.0.1:" + strconv.Itoa(to.electionPort))
	if err != nil {
		q.Close()
		return nil, err
	}
	return &peerLink{quorum: q, election: el}, nil
}

func (l *peerLink) stall() {
	l.quorum.Stall()
	l.election.Stall()
}

func (l *peerLink) restore() {
	l.quorum.Restore()
	l.election.Restore()
}

func (l *peerLink) close() {
	l.quorum.Close()
	l.election.Close()
}

// serverLine returns the server.N line for member to in member from's
// zoo.cfg.
func (e *Ensemble) serverLine(from, to int) string {
	m := e.members[to]
	switch {
	case e.links == nil:
		return fmt.Sprintf("server.%d=127.0.0.1:%d:%d", m.id, m.peerPort, m.electionPort)
	case from == to:
		return fmt.Sprintf("server.%d=0.0.0.0:%d:%d", m.id, m.peerPort, m.electionPort)
	default:
		l := e.links[from][to]
		return fmt.Sprintf("server.%d=127.0.0.1:%s:%s", m.id, l.quorum.port(), l.election.port())
	}
}

// startLinksLocked creates a proxy pair for every directed link.
func (e *Ensemble) startLinksLocked() error {
	n := len(e.members)
	e.links = make([][]*peerLink, n)
	for a := range n {
		e.links[a] = make([]*peerLink, n)
		for b := range n {
			if a == b {
				continue
			}
			l, err := newPeerLink(e.members[b])
			if err != nil {
				e.closeLinksLocked()
				return err
			}
			e.links[a][b] = l
		}
	}
	e.isolated = make([]bool, n)
	return nil
}

func (e *Ensemble) closeLinksLocked() {
	for _, row := range e.links {
		for _, l := range row {
			if l != nil {
				l.close()
			}
		}
	}
	e.links = nil
}

// Isolate partitions member i from every other member: every
// server-to-server link touching it, in both directions and on both the
// quorum and the election port, holds its bytes (connections stay open,
// new ones are accepted but not forwarded), as a network partition would.
// Member i's client port is untouched. See WithPeerProxies for what
// follows, and when. Isolation lasts until Heal, across Stop and Start of
// any member. Isolate needs WithPeerProxies; isolating an isolated member
// does nothing.
func (e *Ensemble) Isolate(i int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.links == nil {
		return errNoPeerProxies
	}
	e.isolated[i] = true
	for b := range e.members {
		if b != i {
			e.links[i][b].stall()
			e.links[b][i].stall()
		}
	}
	return nil
}

// Heal ends Isolate(i): held bytes are delivered and the links to every
// member that is not itself isolated carry traffic again. It does not wait
// for member i to rejoin; use WaitQuorum for that.
func (e *Ensemble) Heal(i int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.links == nil {
		return errNoPeerProxies
	}
	e.isolated[i] = false
	for b := range e.members {
		if b != i && !e.isolated[b] {
			e.links[i][b].restore()
			e.links[b][i].restore()
		}
	}
	return nil
}

// Isolated reports whether member i is isolated.
func (e *Ensemble) Isolated(i int) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.isolatedLocked(i)
}

func (e *Ensemble) isolatedLocked(i int) bool {
	return e.isolated != nil && e.isolated[i]
}

var errNoPeerProxies = errors.New("zkserver: ensemble started without WithPeerProxies")
