// Command withzk runs a command with a ZooKeeper server: the one ZK_SERVERS
// names if it is set, else one of its own, Debian's ZooKeeper started on a
// free loopback port (installing the zookeeper package with apt-get if it is
// missing) and stopped when the command ends. The command runs with
// ZK_SERVERS naming the server. withzk exits with the command's status.
//
//	go run ./tools/withzk -- go run ./cmd/zkrecipes demo
//
// It is a development tool, for the README's demo (make demo) on a fresh
// machine with no ZooKeeper, and the one part of the project that installs
// system packages: the zkrecipes command only connects to the servers it is
// given, and the test kit (zktest) says what is missing instead.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"github.com/zkrecipes/recipes/internal/zkserver"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(os.Stderr, "usage: withzk [--] CMD [ARG...]")
		return 64
	}
	servers := os.Getenv("ZK_SERVERS")
	if servers != "" {
		fmt.Fprintf(os.Stderr, "withzk: using the ZooKeeper that ZK_SERVERS names (%s).\n", servers)
	} else {
		fmt.Fprintln(os.Stderr, "withzk: starting a local ZooKeeper (Debian's zookeeper package; installing it if missing)...")
		if err := zkserver.InstallDebian(); err != nil {
			fmt.Fprintf(os.Stderr, "withzk: install ZooKeeper: %v\n", err)
			return 69
		}
		srv, err := zkserver.Start()
		if err != nil {
			fmt.Fprintf(os.Stderr, "withzk: start ZooKeeper: %v\n", err)
			return 69
		}
		defer srv.Close()
		servers = strings.Join(srv.Servers(), ",")
		fmt.Fprintf(os.Stderr, "withzk: ZooKeeper is up at %s.\n", servers)
	}

	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "ZK_SERVERS="+servers)
	// An interrupt from the terminal reaches the command too; wait for it
	// to finish, then stop the server. A signal sent to withzk alone is
	// passed on.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "withzk: %v\n", err)
		return 127
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	for {
		select {
		case sig := <-signals:
			_ = cmd.Process.Signal(sig)
		case err := <-waited:
			return status(err)
		}
	}
}

// status is the exit status that passes on how the command ended.
func status(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return 128 + int(st.Signal())
		}
		return ee.ExitCode()
	}
	fmt.Fprintf(os.Stderr, "withzk: %v\n", err)
	return 1
}
