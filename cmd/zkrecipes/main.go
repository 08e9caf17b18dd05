// Command zkrecipes runs commands while holding ZooKeeper locks, like
// flock(1) for a cluster, and shows who holds them.
//
// Usage:
//
//	zkrecipes [--servers H:P,...] [--session-timeout D] COMMAND ...
//
//	zkrecipes lock PATH [--timeout D] [--data S] -- CMD [ARG...]
//	zkrecipes rlock|wlock|semaphore-mutex PATH [...] -- CMD [ARG...]
//	zkrecipes semaphore PATH --leases N [...] -- CMD [ARG...]
//	zkrecipes multilock PATH,PATH... [...] -- CMD [ARG...]
//	zkrecipes double-barrier PATH --members N [...] -- CMD [ARG...]
//	zkrecipes barrier set|remove|wait PATH [--timeout D]
//	zkrecipes revoke PATH [NODE]
//	zkrecipes inspect PATH [--json]
//	zkrecipes demo [--workers N] [--transfers N]
//
// --servers defaults to $ZK_SERVERS, else 127.0.0.1:2181. The exit status is
// CMD's own, or one of the codes listed by `zkrecipes --help`.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Exit codes of zkrecipes itself; any other status is the command's own.
const (
	exitNothing     = 1   // revoke: nobody holds, or the node is gone or is no lock node
	exitUsage       = 64  // bad command line (sysexits EX_USAGE)
	exitUnavailable = 69  // ZooKeeper unreachable or failing (EX_UNAVAILABLE)
	exitTimeout     = 75  // --timeout passed before the lock was held (EX_TEMPFAIL)
	exitLost        = 79  // the lock was lost while the command ran
	exitInterrupted = 130 // interrupted (SIGINT/SIGTERM) while waiting
)

const usage = `usage: zkrecipes [--servers H:P,...] [--session-timeout D] COMMAND ...

Commands (each waiting one takes --timeout D and --data S; lock, rlock and
wlock also --revocable: stop CMD when someone revokes the lock):
  lock PATH -- CMD [ARG...]
        run CMD while holding the mutex at PATH (Curator InterProcessMutex)
  rlock PATH -- CMD, wlock PATH -- CMD
        ... the read or the write half of the read/write lock at PATH
  semaphore PATH --leases N -- CMD
        ... one of the N leases of the semaphore at PATH
  semaphore-mutex PATH -- CMD
        ... the semaphore mutex at PATH (Curator InterProcessSemaphoreMutex)
  multilock PATH,PATH... -- CMD
        ... the mutexes at all the PATHs, taken in path order
  double-barrier PATH --members N -- CMD
        enter the double barrier at PATH (waiting for N members), run CMD,
        then leave it together with the others
  barrier set|remove|wait PATH
        put up, take down, or wait for the removal of the barrier at PATH
  revoke PATH [NODE]
        ask the holders of the lock at PATH (or the one NODE) to let go;
        only mutex and read/write lock nodes can be revoked. A holder that
        does not listen keeps its lock; inspect then shows "revocation
        requested" in place of its data
  inspect PATH [--json]
        show what is at PATH: a lock's holders and waiters, a barrier, or a
        double barrier's members
  demo [--workers N] [--transfers N]
        a batch job's story: worker processes meet at a double barrier,
        share a read/write lock, move money under multi-locks, and leave
        together; needs a running ZooKeeper (from a checkout, 'make demo'
        starts one and runs this)

Global flags (before the command, or among its own flags):
  --servers H:P,...      ZooKeeper ensemble (default $ZK_SERVERS, else 127.0.0.1:2181)
  --session-timeout D    ZooKeeper session timeout (default 10s)

While CMD runs its environment has ZKRECIPES_LOCK_PATH (the path, or a
multilock's paths, comma-separated), ZKRECIPES_FENCING_TOKEN (the fencing
token; a multilock's largest) and ZKRECIPES_FENCING_TOKENS (PATH=TOKEN for
each lock held, comma-separated). If the lock is lost, CMD gets SIGTERM
(SIGKILL 5s later) and zkrecipes exits 79.

Exit status: CMD's own status (128+N if killed by signal N), or
  64  bad usage, or a path another kind of recipe uses
  69  ZooKeeper unavailable, or the session lost
  75  timed out waiting     79  lock lost while CMD ran
  130 interrupted while waiting
  1   revoke: nothing to revoke (nobody holds, or NODE is gone or is not
      a mutex or read/write lock node)
`

// globals are the flags every command shares.
type globals struct {
	servers        []string
	sessionTimeout time.Duration
	connectTimeout time.Duration // a command's --timeout, which bounds connecting too; 0: the library's default
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// usageError is a bad command line; run prints it with a hint and exits 64.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return usageError{fmt.Sprintf(format, args...)}
}

// exitError carries an exit status chosen by a command.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func run(args []string, stdout, stderr io.Writer) int {
	g, rest, err := parseGlobals(args, stderr)
	if err == nil {
		err = dispatch(g, rest, stdout, stderr)
	}
	var ue usageError
	var ee exitError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, usage)
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "zkrecipes: %s\nRun 'zkrecipes --help' for usage.\n", ue.msg)
		return exitUsage
	case errors.As(err, &ee):
		if ee.err != nil {
			fmt.Fprintf(stderr, "zkrecipes: %v\n", ee.err)
		}
		return ee.code
	default:
		fmt.Fprintf(stderr, "zkrecipes: %v\n", err)
		return exitUnavailable
	}
}

func parseGlobals(args []string, stderr io.Writer) (globals, []string, error) {
	fs := flag.NewFlagSet("zkrecipes", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	defServers := os.Getenv("ZK_SERVERS")
	if defServers == "" {
		defServers = "127.0.0.1:2181"
	}
	servers := fs.String("servers", defServers, "")
	timeout := fs.Duration("session-timeout", 10*time.Second, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return globals{}, nil, err
		}
		return globals{}, nil, usagef("%v", err)
	}
	g := globals{sessionTimeout: *timeout}
	g.servers = splitServers(*servers)
	if len(g.servers) == 0 {
		return g, nil, usagef("--servers is empty")
	}
	if g.sessionTimeout <= 0 {
		return g, nil, usagef("--session-timeout must be positive")
	}
	return g, fs.Args(), nil
}

func dispatch(g globals, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("no command given")
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "lock", "rlock", "wlock", "semaphore", "semaphore-mutex", "multilock":
		return holdCommand(g, cmd, rest, stderr)
	case "barrier":
		return barrierCommand(g, rest, stderr)
	case "double-barrier":
		return doubleBarrierCommand(g, rest, stderr)
	case "revoke":
		return revokeCommand(g, rest, stdout)
	case "inspect":
		return inspectCommand(g, rest, stdout)
	case "demo":
		return demoCommand(g, rest, stdout, stderr)
	case demoJobCommand:
		return demoJob(g, rest, stdout)
	case "help":
		return flag.ErrHelp
	default:
		return usagef("unknown command %q", cmd)
	}
}

// newFlagSet returns a command's flag set, which also takes the global
// flags (--servers, --session-timeout), so they may come after the command
// name too.
func newFlagSet(name string, g *globals) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Func("servers", "", func(v string) error {
		servers := splitServers(v)
		if len(servers) == 0 {
			return errors.New("--servers is empty")
		}
		g.servers = servers
		return nil
	})
	fs.Func("session-timeout", "", func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("--session-timeout %q is not a positive duration", v)
		}
		g.sessionTimeout = d
		return nil
	})
	return fs
}

func splitServers(v string) []string {
	var servers []string
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			servers = append(servers, s)
		}
	}
	return servers
}

// parseInterspersed parses flags that may come before or after the
// positional arguments (all of which come before any "--").
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usagef("%s: %v", fs.Name(), err)
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// splitCommand splits args at the first "--" into the recipe's own
// arguments and the command to run.
func splitCommand(name string, args []string) (own, command []string, err error) {
	for i, a := range args {
		if a == "--" {
			if i == len(args)-1 {
				return nil, nil, usagef("%s: no command after --", name)
			}
			return args[:i], args[i+1:], nil
		}
	}
	return nil, nil, usagef("%s: missing -- before the command to run", name)
}
