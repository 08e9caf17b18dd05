package zkserver

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// jvmFlags keep the JVM small and quick to start; a test server does not
// need a JIT tuned for throughput.
var jvmFlags = []string{
	"-Xms32m",
	"-Xmx256m",
	"-XX:+UseSerialGC",
	"-XX:TieredStopAtLevel=1",
	"-XX:-UsePerfData",
	"-XX:+ExitOnOutOfMemoryError",
	"-Djava.awt.headless=true",
	"-Djava.net.preferIPv4Stack=true",
	// Make the container manager reap empty container nodes quickly.
	"-Dznode.container.checkIntervalMs=100",
	// No fsync: test data does not need to survive a machine crash, and a
	// killed process still leaves its writes in the page cache.
	"-Dzookeeper.forceSync=no",
	"-Dzookeeper.admin.enableServer=false",
	"-Dzookeeper.4lw.commands.whitelist=*",
	"-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
	"-Dorg.slf4j.simpleLogger.showDateTime=true",
	"-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
}

// process is one running JVM.
type process struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has been reaped
	err    error         // exit status; valid after exited is closed
}

// startJava starts mainClass with the ZooKeeper class path in its own process
// group, appending stdout and stderr to logPath.
func startJava(dir, logPath, mainClass string, extraProps []string, args ...string) (*process, error) {
	inst, err := installed()
	if err != nil {
		return nil, err
	}
	java, err := javaPath()
	if err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("zkserver: open server log: %w", err)
	}
	defer logFile.Close() // the child has its own copy of the descriptor

	argv := append([]string{}, jvmFlags...)
	argv = append(argv, inst.props...)
	argv = append(argv, extraProps...)
	argv = append(argv, "-cp", inst.classPath, mainClass)
	argv = append(argv, args...)

	cmd := exec.Command(java, argv...)
	cmd.Dir = dir
	cmd.Stdin = nil
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("zkserver: start %s: %w", java, err)
	}
	p := &process{cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// kill kills the process (its whole group, where there are groups) and
// waits until the JVM is reaped.
func (p *process) kill() error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	pid := p.cmd.Process.Pid
	if err := killGroup(pid); err != nil {
		// Fall back to the process itself if the group is gone.
		_ = p.cmd.Process.Kill()
	}
	select {
	case <-p.exited:
		return nil
	case <-time.After(30 * time.Second):
		return fmt.Errorf("zkserver: java process %d did not exit after SIGKILL", pid)
	}
}

// alive reports whether the process has not exited yet.
func (p *process) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// FourLetterWord sends a ZooKeeper four-letter-word command such as "ruok",
// "srvr" or "mntr" to addr and returns the full reply.
func FourLetterWord(addr, cmd string, timeout time.Duration) (string, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(timeout)); err != nil {
		return "", err
	}
	if _, err := io.WriteString(c, cmd); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	if err != nil {
		return string(b), err
	}
	return string(b), nil
}

// ServerMode asks addr for "srvr" and returns the value of its Mode line
// ("standalone", "leader", "follower", ...), or an error if the server does
// not answer within a second or is not serving requests: it suits a loop
// that asks again.
func ServerMode(addr string) (string, error) { return serverMode(addr, time.Second) }

// answerBound bounds the wait for a running member's answer to "srvr" where
// the question is asked once (Leader, Followers): a member that is up
// answers, but a loaded machine can delay that answer past a second, and a
// member left out of the answer for it would be misreported.
const answerBound = 30 * time.Second

func serverMode(addr string, timeout time.Duration) (string, error) {
	out, err := FourLetterWord(addr, "srvr", timeout)
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if mode, ok := strings.CutPrefix(sc.Text(), "Mode: "); ok {
			return strings.TrimSpace(mode), nil
		}
	}
	return "", fmt.Errorf("not serving: %q", strings.TrimSpace(out))
}

// lastZxid asks addr for "srvr" and returns its Zxid: the last transaction
// the server applied.
func lastZxid(addr string) (int64, error) {
	out, err := FourLetterWord(addr, "srvr", answerBound)
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(out) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Zxid: "); ok {
			return strconv.ParseInt(v, 0, 64)
		}
	}
	return 0, fmt.Errorf("no Zxid in %q", strings.TrimSpace(out))
}

// portInUse reports whether the server log says a port could not be bound.
func portInUse(logPath string) bool {
	b, err := os.ReadFile(logPath)
	return err == nil && strings.Contains(string(b), "Address already in use")
}
