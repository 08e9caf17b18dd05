// Package zkserver runs real ZooKeeper servers on loopback: standalone or a
// small ensemble. The tests (through zktest) and `zkrecipes demo` use it.
//
// Servers are started from Debian's zookeeper package (installed with apt-get
// on first use if missing) as child Java processes in their own process
// group, with settings tuned for fast tests: tickTime=100ms (so sessions as
// short as 200ms are accepted), container nodes reaped every 100ms, no fsync,
// all four-letter words enabled and the admin server disabled.
package zkserver

import (
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	standaloneMain = "org.apache.zookeeper.server.ZooKeeperServerMain"
	quorumMain     = "org.apache.zookeeper.server.quorum.QuorumPeerMain"

	// DefaultStartTimeout bounds how long Start waits for a server to serve.
	DefaultStartTimeout = 30 * time.Second
)

// Option configures a Server or an Ensemble.
type Option func(*config)

type config struct {
	startTimeout time.Duration
	extraCfg     []string // extra zoo.cfg lines
	props        []string // extra -D flags
	peerProxies  bool     // ensemble links through TCPProxy; see WithPeerProxies
}

// SuperCredentials are the digest credentials ("user:password") of the
// harness's super user: every server it starts lets a connection that
// authenticates with them read and delete any node, whatever its ACL, so
// tests can look at and clean up the nodes of ACL'd recipes.
const SuperCredentials = "zktest:zktest"

// superDigest is SuperCredentials as ZooKeeper's superDigest property wants
// it: user:base64(sha1(user:password)).
func superDigest() string {
	user, _, _ := strings.Cut(SuperCredentials, ":")
	sum := sha1.Sum([]byte(SuperCredentials))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

func newConfig(opts []Option) *config {
	c := &config{startTimeout: DefaultStartTimeout,
		props: []string{"-Dzookeeper.DigestAuthenticationProvider.superDigest=" + superDigest()}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// WithStartTimeout sets how long to wait for a server to start serving.
func WithStartTimeout(d time.Duration) Option {
	return func(c *config) { c.startTimeout = d }
}

// WithConfig adds "key=value" to zoo.cfg, overriding the harness default for
// the same key.
func WithConfig(key, value string) Option {
	return func(c *config) { c.extraCfg = append(c.extraCfg, key+"="+value) }
}

// WithSystemProperty passes -Dkey=value to the server JVM.
func WithSystemProperty(key, value string) Option {
	return func(c *config) { c.props = append(c.props, "-D"+key+"="+value) }
}

// Server is a standalone ZooKeeper server listening on 127.0.0.1.
type Server struct {
	mu      sync.Mutex
	cfg     *config
	dir     string
	cfgPath string
	logPath string
	port    int
	proc    *process
	closed  bool
}

// Start starts a standalone ZooKeeper server on a free loopback port and
// waits until it serves requests.
func Start(opts ...Option) (*Server, error) {
	if err := EnsureInstalled(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "zktest-")
	if err != nil {
		return nil, fmt.Errorf("zkserver: %w", err)
	}
	s := &Server{
		cfg:     newConfig(opts),
		dir:     dir,
		cfgPath: filepath.Join(dir, "zoo.cfg"),
		logPath: filepath.Join(dir, "zookeeper.log"),
	}
	// A port chosen by freePorts can be grabbed by someone else before
	// the JVM binds it; retry with a new port in that case.
	for attempt := 1; ; attempt++ {
		err = s.startFresh()
		if err == nil {
			return s, nil
		}
		if attempt == 3 || !portInUse(s.logPath) {
			os.RemoveAll(dir)
			return nil, err
		}
	}
}

func (s *Server) startFresh() error {
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	s.port = ports[0]
	dataDir := filepath.Join(s.dir, "data")
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return fmt.Errorf("zkserver: %w", err)
	}
	lines := baseConfig(dataDir, s.port)
	if err := writeConfig(s.cfgPath, lines, s.cfg.extraCfg); err != nil {
		return err
	}
	if err := os.WriteFile(s.logPath, nil, 0o644); err != nil {
		return fmt.Errorf("zkserver: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.startLocked()
}

func (s *Server) startLocked() error {
	if s.closed {
		return errors.New("zkserver: server is closed")
	}
	if s.proc != nil && s.proc.alive() {
		return nil
	}
	p, err := startJava(s.dir, s.logPath, standaloneMain, s.cfg.props, s.cfgPath)
	if err != nil {
		return err
	}
	s.proc = p
	deadline := time.Now().Add(s.cfg.startTimeout)
	err = waitServing(p, s.Addr(), s.logPath, deadline, func(mode string) bool { return mode == "standalone" })
	if err != nil {
		p.kill()
		return err
	}
	return nil
}

// Addr returns the client address, "127.0.0.1:port".
func (s *Server) Addr() string {
	return "127.0.0.1:" + strconv.Itoa(s.port)
}

// Servers returns the server list to pass to zk.Connect.
func (s *Server) Servers() []string {
	return []string{s.Addr()}
}

// LogPath returns the path of the server's log file.
func (s *Server) LogPath() string {
	return s.logPath
}

// PID returns the process id of the running server, or 0 if it is stopped.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.cmd.Process.Pid
}

// Stop kills the server (SIGKILL to its process group) and waits for it to
// exit. The data directory is kept, so Restart brings back the same state.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return nil
	}
	err := s.proc.kill()
	s.proc = nil
	return err
}

// Restart stops the server if it is running and starts it again on the same
// port with the same data directory, waiting until it serves.
func (s *Server) Restart() error {
	if err := s.Stop(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.startLocked()
}

// RestartWith is Restart with zoo.cfg lines ("key=value") added, or
// replacing those of the same keys: a server whose settings change under its
// clients, as in a rolling restart.
func (s *Server) RestartWith(lines ...string) error {
	if err := s.Stop(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range lines {
		key, _, _ := strings.Cut(l, "=")
		s.cfg.extraCfg = slices.DeleteFunc(s.cfg.extraCfg, func(e string) bool { return strings.HasPrefix(e, key+"=") })
		s.cfg.extraCfg = append(s.cfg.extraCfg, l)
	}
	if err := writeConfig(s.cfgPath, baseConfig(filepath.Join(s.dir, "data"), s.port), s.cfg.extraCfg); err != nil {
		return err
	}
	return s.startLocked()
}

// Close stops the server and removes its temporary directory.
func (s *Server) Close() error {
	err := s.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return err
	}
	s.closed = true
	if rmErr := os.RemoveAll(s.dir); rmErr != nil && err == nil {
		err = fmt.Errorf("zkserver: remove %s: %w", s.dir, rmErr)
	}
	return err
}

// waitServing polls addr with "srvr" until it reports a mode accepted by ok,
// the process exits, or the deadline passes. Errors include the log's tail.
func waitServing(p *process, addr, logPath string, deadline time.Time, ok func(mode string) bool) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		mode, err := ServerMode(addr)
		if err == nil && ok(mode) {
			return nil
		}
		if err == nil {
			err = fmt.Errorf("mode %q", mode)
		}
		last = err
		if time.Now().After(deadline) {
			return fmt.Errorf("zkserver: ZooKeeper at %s not serving before deadline (last: %v); log %s:\n%s",
				addr, last, logPath, fileTail(logPath, 40))
		}
		select {
		case <-p.exited:
			return fmt.Errorf("zkserver: ZooKeeper at %s exited during start (%v); log %s:\n%s",
				addr, p.err, logPath, fileTail(logPath, 40))
		case <-tick.C:
		}
	}
}

// baseConfig returns the zoo.cfg lines shared by standalone and quorum
// servers.
func baseConfig(dataDir string, clientPort int) []string {
	return []string{
		"tickTime=100",
		"initLimit=50",
		"syncLimit=50",
		"dataDir=" + dataDir,
		"clientPort=" + strconv.Itoa(clientPort),
		"clientPortAddress=127.0.0.1",
		"minSessionTimeout=200",
		"maxSessionTimeout=60000",
		"maxClientCnxns=0",
		"admin.enableServer=false",
		"4lw.commands.whitelist=*",
		"forceSync=no",
		"autopurge.purgeInterval=0",
	}
}

// writeConfig writes zoo.cfg; lines in extra replace base lines with the
// same key.
func writeConfig(path string, base, extra []string) error {
	override := map[string]bool{}
	for _, l := range extra {
		k, _, _ := strings.Cut(l, "=")
		override[k] = true
	}
	var b strings.Builder
	for _, l := range base {
		if k, _, _ := strings.Cut(l, "="); !override[k] {
			b.WriteString(l + "\n")
		}
	}
	for _, l := range extra {
		b.WriteString(l + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("zkserver: write %s: %w", path, err)
	}
	return nil
}
