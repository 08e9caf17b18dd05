package zkserver

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Ensemble is a replicated ZooKeeper ensemble of QuorumPeerMain processes on
// 127.0.0.1. Members are indexed from 0; member i has myid i+1.
type Ensemble struct {
	mu       sync.Mutex
	cfg      *config
	dir      string
	members  []*member
	links    [][]*peerLink // links[a][b]: how a reaches b; nil without WithPeerProxies
	isolated []bool        // members partitioned by Isolate; nil without WithPeerProxies
	closed   bool
}

type member struct {
	id                                 int
	dir, cfgPath, logPath              string
	clientPort, peerPort, electionPort int
	proc                               *process
}

func (m *member) addr() string { return "127.0.0.1:" + strconv.Itoa(m.clientPort) }

// StartEnsemble starts an ensemble of n servers and waits until a quorum
// serves: every member reports Mode leader or follower and there is exactly
// one leader. With WithPeerProxies the members reach each other through
// proxies that Isolate and Heal control.
func StartEnsemble(n int, opts ...Option) (*Ensemble, error) {
	if n < 1 {
		return nil, fmt.Errorf("zkserver: ensemble size %d < 1", n)
	}
	if err := EnsureInstalled(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "zktest-ensemble-")
	if err != nil {
		return nil, fmt.Errorf("zkserver: %w", err)
	}
	e := &Ensemble{cfg: newConfig(opts), dir: dir}
	for attempt := 1; ; attempt++ {
		ports, err := freePorts(3 * n)
		if err == nil {
			err = e.startFresh(ports)
		}
		if err == nil {
			return e, nil
		}
		inUse := false
		for _, m := range e.members {
			inUse = inUse || portInUse(m.logPath)
		}
		if attempt == 3 || !inUse {
			os.RemoveAll(dir)
			return nil, err
		}
	}
}

// startFresh starts len(ports)/3 members on ports: client, quorum and
// election port of each in turn.
func (e *Ensemble) startFresh(ports []int) (err error) {
	n := len(ports) / 3
	e.mu.Lock()
	defer e.mu.Unlock()
	defer func() {
		if err != nil {
			e.closeLinksLocked()
		}
	}()
	e.members = make([]*member, n)
	for i := range n {
		m := &member{
			id:           i + 1,
			dir:          filepath.Join(e.dir, "s"+strconv.Itoa(i+1)),
			clientPort:   ports[3*i],
			peerPort:     ports[3*i+1],
			electionPort: ports[3*i+2],
		}
		m.cfgPath = filepath.Join(m.dir, "zoo.cfg")
		m.logPath = filepath.Join(m.dir, "zookeeper.log")
		e.members[i] = m
	}
	if e.cfg.peerProxies {
		if err := e.startLinksLocked(); err != nil {
			return err
		}
	}
	for i, m := range e.members {
		dataDir := filepath.Join(m.dir, "data")
		if err := os.MkdirAll(dataDir, 0o755); err != nil {
			return fmt.Errorf("zkserver: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dataDir, "myid"), []byte(strconv.Itoa(m.id)+"\n"), 0o644); err != nil {
			return fmt.Errorf("zkserver: %w", err)
		}
		lines := baseConfig(dataDir, m.clientPort)
		for j := range e.members {
			lines = append(lines, e.serverLine(i, j))
		}
		if err := writeConfig(m.cfgPath, lines, e.cfg.extraCfg); err != nil {
			return err
		}
		if err := os.WriteFile(m.logPath, nil, 0o644); err != nil {
			return fmt.Errorf("zkserver: %w", err)
		}
	}
	for _, m := range e.members {
		if err := e.launchLocked(m); err != nil {
			e.killAllLocked()
			return err
		}
	}
	if err := e.waitQuorumLocked(); err != nil {
		e.killAllLocked()
		return err
	}
	// A member binds its election port in a thread of its own and exits
	// after three failed binds a second apart; the quorum can form before
	// that (the member dials out), so a failed bind is looked for here,
	// and StartEnsemble tries again with new ports.
	for _, m := range e.members {
		if portInUse(m.logPath) {
			e.killAllLocked()
			return fmt.Errorf("zkserver: ensemble server %d could not bind a port; log %s:\n%s",
				m.id, m.logPath, fileTail(m.logPath, 20))
		}
	}
	return nil
}

func (e *Ensemble) launchLocked(m *member) error {
	if m.proc != nil && m.proc.alive() {
		return nil
	}
	p, err := startJava(m.dir, m.logPath, quorumMain, e.cfg.props, m.cfgPath)
	if err != nil {
		return err
	}
	m.proc = p
	return nil
}

func (e *Ensemble) killAllLocked() {
	for _, m := range e.members {
		if m.proc != nil {
			m.proc.kill()
			m.proc = nil
		}
	}
}

// Len returns the number of members.
func (e *Ensemble) Len() int { return len(e.members) }

// Servers returns the client addresses of all members, running or not.
func (e *Ensemble) Servers() []string {
	out := make([]string, len(e.members))
	for i, m := range e.members {
		out[i] = m.addr()
	}
	return out
}

// Addr returns the client address of member i.
func (e *Ensemble) Addr(i int) string { return e.members[i].addr() }

// LogPath returns the log file of member i.
func (e *Ensemble) LogPath(i int) string { return e.members[i].logPath }

// Report describes every member for a failed test: its address, whether
// its process runs, was stopped or exited on its own (with the exit
// status), and the last n lines of its log.
func (e *Ensemble) Report(n int) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b strings.Builder
	for i, m := range e.members {
		state := "stopped"
		switch {
		case m.proc != nil && m.proc.alive():
			state = "running"
		case m.proc != nil:
			state = fmt.Sprintf("exited on its own (%v)", m.proc.err)
		}
		if e.isolatedLocked(i) {
			state += ", isolated"
		}
		fmt.Fprintf(&b, "--- server %d (%s) %s; log %s:\n%s\n", m.id, m.addr(), state, m.logPath, fileTail(m.logPath, n))
	}
	return b.String()
}

// Close kills every member, closes the peer proxies and removes the
// ensemble's temporary directory.
func (e *Ensemble) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var err error
	for _, m := range e.members {
		if m.proc != nil {
			if kerr := m.proc.kill(); kerr != nil && err == nil {
				err = kerr
			}
			m.proc = nil
		}
	}
	e.closeLinksLocked()
	if !e.closed {
		e.closed = true
		if rmErr := os.RemoveAll(e.dir); rmErr != nil && err == nil {
			err = fmt.Errorf("zkserver: remove %s: %w", e.dir, rmErr)
		}
	}
	return err
}
