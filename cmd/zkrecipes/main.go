// Command zkrecipes runs commands while holding ZooKeeper locks, like
// flock(1) for a cluster, or while leading an election, and shows who holds
// them and who leads.
//
// Usage:
//
//	zkrecipes [--servers H:P,...] [--session-timeout D] [--connect-timeout D] [--auth S:C] [--acl ACL] COMMAND ...
//
//	zkrecipes lock PATH [--timeout D | -n] [--data S] [-q] -- CMD [ARG...]
//	zkrecipes rlock|wlock|semaphore-mutex PATH [...] -- CMD [ARG...]
//	zkrecipes semaphore PATH --leases N [...] -- CMD [ARG...]
//	zkrecipes multilock PATH,PATH... [...] -- CMD [ARG...]
//	zkrecipes double-barrier PATH --members N [...] -- CMD [ARG...]
//	zkrecipes elect PATH [--id ID] [--selector] [--requeue] [...] -- CMD [ARG...]
//	zkrecipes barrier set|remove|wait PATH [--timeout D | -n] [-q]
//	zkrecipes revoke PATH [NODE]
//	zkrecipes inspect PATH [-r] [--json]
//	zkrecipes leader PATH [--watch] [--json] [-q]
//	zkrecipes demo [--workers N] [--transfers N]
//
// `zkrecipes COMMAND --help` shows a command's flags and exit statuses;
// `zkrecipes --help` lists the commands and every exit status.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// Exit codes of zkrecipes itself; any other status is the command's own.
const (
	exitNothing     = 1   // revoke: nothing to revoke; inspect: no such path; leader: nobody campaigns
	exitUsage       = 64  // bad command line (sysexits EX_USAGE), and only that
	exitConflict    = 65  // the path is another recipe's, or a semaphore's with other --leases (EX_DATAERR)
	exitUnavailable = 69  // ZooKeeper unreachable or failing (EX_UNAVAILABLE)
	exitNoPerm      = 77  // the nodes' ACL does not let this identity in (EX_NOPERM)
	exitTimeout     = 75  // --timeout passed, or -n found it busy (EX_TEMPFAIL)
	exitLost        = 79  // the lock was lost while the command ran
	exitCannotRun   = 127 // CMD cannot be started: not found, or not executable (one status for both, where a shell says 126 for the latter)
	exitInterrupted = 130 // interrupted (SIGINT/SIGTERM) while waiting
)

// A command is one subcommand: its usage is the one place that says what it
// takes, and --help prints it.
type command struct {
	name    string
	summary string // its lines in `zkrecipes --help`
	usage   string // `zkrecipes NAME --help`
	run     func(g globals, name string, args []string, stdout, stderr io.Writer) error
	hidden  bool // not listed (the demo's worker)
}

// commands are the subcommands, in the order --help lists them.
var commands []command

func init() {
	commands = slices.Concat(holdCommands(), []command{electCmd}, barrierCommands(), []command{revokeCmd, inspectCmd, leaderCmd}, demoCommands())
}

func lookup(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// globalUsage is `zkrecipes --help`: the commands' summaries around what
// they all share.
func globalUsage() string {
	var b strings.Builder
	b.WriteString(`usage: zkrecipes [--servers H:P,...] [--session-timeout D] [--connect-timeout D]
                 [--auth S:C] [--acl ACL] COMMAND ...

Commands ('zkrecipes COMMAND --help' shows one's flags):
`)
	seen := map[string]bool{}
	for _, c := range commands {
		if !c.hidden && !seen[c.summary] {
			seen[c.summary] = true
			b.WriteString(c.summary)
		}
	}
	b.WriteString(globalFlagsUsage + `
While CMD runs its environment has ZKRECIPES_LOCK_PATH (the path, or a
multilock's paths, comma-separated), ZKRECIPES_FENCING_TOKEN (the fencing
token; none for a multilock, whose paths each have their own) and
ZKRECIPES_FENCING_TOKENS (PATH=TOKEN for each lock held, comma-separated).
If the lock is lost, CMD gets SIGTERM, SIGKILL a twentieth of the session
timeout later, and zkrecipes exits 79; unless stdin is a terminal, the
signals go to CMD's whole process group.
Under elect, CMD has ZKRECIPES_ELECTION_PATH, ZKRECIPES_LEADER_ID and
ZKRECIPES_FENCING_TOKEN instead, and exit status 79 is leadership lost.
` + exitUsageText)
	return b.String()
}

const globalFlagsUsage = `
Global flags (before the command, or among its own flags, where they
override what came before the command; any other flag given twice is an
error):
  --servers H:P,...      ZooKeeper ensemble (default $ZK_SERVERS, else
                         127.0.0.1:2181)
  --session-timeout D    ZooKeeper session timeout (default 10s; 1ms to
                         596h31m, what ZooKeeper can be asked for). The server
                         bounds it by its minSessionTimeout and
                         maxSessionTimeout (by default 2 to 20 ticks): a
                         grant other than the one asked is reported
  --connect-timeout D    give up connecting after D, status 69 (default: a
                         command's --timeout; 5s with -n; else 15s). Without
                         it, inspect, leader and revoke give up once every
                         attempt for 3s has been refused (nothing listens)
  --auth SCHEME:CREDS    authenticate, e.g. digest:user:password; repeatable,
                         and added to $ZKRECIPES_AUTH (one SCHEME:CREDS; prefer
                         it: a command line is visible to other users, and
                         commands run under a lock do not get it)
  --acl ACL              ACL of the nodes created at and below the recipe's
                         path: creator (auth::cdrwa), open
                         (world:anyone:cdrwa, the default), or zkCli's
                         SCHEME:ID:PERMS,... (default $ZKRECIPES_ACL)
  --parent-acl ACL       ACL of the parents created above the recipe's path, as
                         --acl (default $ZKRECIPES_PARENT_ACL, else --acl's
                         with world:anyone given create and read: others may
                         create their own recipes beside, and delete nothing)
  --tls-ca FILE          talk TLS (to the servers' secureClientPort), trusting
                         the CAs in this PEM file (default: the system's)
  --tls-cert FILE, --tls-key FILE
                         TLS with this client certificate and key (PEM)
`

// waitFlagsUsage is what every waiting command says of --timeout, -n,
// --data and -q; waitOnlyFlagsUsage is the same for a command that cannot
// try once.
const (
	waitFlagsUsage     = timeoutUsage + tryOnceUsage + dataUsage + quietUsage
	waitOnlyFlagsUsage = timeoutUsage + dataUsage + quietUsage
)

const timeoutUsage = `  --timeout D   give up after D (e.g. 500ms, 30s, 2m) with status 75; it
                also bounds connecting (no ZooKeeper within D: status 69)
                unless --connect-timeout is given. Without it, wait as long
                as it takes, and give up connecting after 15s
`

const tryOnceUsage = `  --timeout 0, -n
                try once, like flock -n: exit 75 at once if it is not free
                (and 69 if ZooKeeper does not answer within 5s, or
                --connect-timeout)
`

const quietUsage = `  -q            quiet, for scripts: no status lines (acquired, leading,
                waiting); errors and warnings are still printed
`

const dataUsage = `  --data S      the data of this process's node, which inspect shows
                (default host:pid)
`

// The exit tables: each command's --help lists the statuses it can
// exit with, and only those; zkrecipes --help lists them all.
const (
	cmdExitHead = `
Exit status: CMD's own status (128+N if killed by signal N), or
`
	rowUsage    = "  64  bad usage (nothing was created)\n"
	rowConflict = "  65  PATH is used by another kind of recipe (nothing was created)\n"
	rowLeases   = `  65  PATH is used by another kind of recipe, or with another --leases;
      --count-path names no node (nothing was created)
`
	rowMembers = `  65  PATH is used by another kind of recipe, or with another --members
      (nothing was created)
`
	rowUnavailable = "  69  ZooKeeper unavailable, or the session lost\n"
	rowTimeout     = "  75  timed out waiting, or -n found it busy\n"
	rowNoPerm      = "  77  the nodes' ACL does not let this identity in (see --auth)\n"
	rowLost        = "  79  lock lost while CMD ran\n"
	rowCannotRun   = `  127 CMD not found or not executable (found out before connecting:
      nothing was created)
`
	rowInterrupted = "  130 interrupted while waiting\n"
)

// exitUsageText is the exit table of zkrecipes --help, barrierExitUsage that
// of barrier.
const (
	exitUsageText = cmdExitHead + `  1   revoke: nothing to revoke; inspect: PATH does not exist; leader:
      nobody campaigns
` + rowUsage + `  65  PATH is used by another kind of recipe, or a semaphore is used with
      another --leases (or --count-path names no node), a double barrier
      with another --members (nothing was created)
` + rowUnavailable + rowTimeout + rowNoPerm + `  79  lock lost while CMD ran (elect: leadership lost)
` + rowCannotRun + rowInterrupted
	barrierExitUsage = `
Exit status: 0 when done, or
` + rowUsage + `  65  PATH is used by a lock or a double barrier (nothing was created)
` + rowUnavailable + `  75  wait: timed out, or -n found the barrier up
` + rowNoPerm + rowInterrupted
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// usageError is a bad command line; run prints it with a hint and exits 64.
type usageError struct {
	cmd string // the command whose --help to point at, "" for zkrecipes
	msg string
}

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return usageError{msg: fmt.Sprintf(format, args...)}
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
	g, rest, err := parseGlobals(args)
	g.notes = stderr
	if err == nil {
		err = dispatch(g, rest, stdout, stderr)
	}
	var ue usageError
	var ee exitError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, globalUsage())
		return 0
	case errors.As(err, &ue):
		help := "zkrecipes --help"
		if ue.cmd != "" {
			help = "zkrecipes " + ue.cmd + " --help"
		}
		fmt.Fprintf(stderr, "zkrecipes: %s\nRun '%s' for usage.\n", ue.msg, help)
		return exitUsage
	case errors.As(err, &ee):
		if ee.err != nil {
			fmt.Fprintf(stderr, "zkrecipes: %v\n", ee.err)
		}
		return ee.code
	case notAllowed(err):
		fmt.Fprintf(stderr, "zkrecipes: %v\n%s\n", err, notAllowedHint)
		return exitNoPerm
	default:
		fmt.Fprintf(stderr, "zkrecipes: %v\n", err)
		return exitUnavailable
	}
}

// dispatch runs the command args name. Its --help prints its usage; its
// usage errors point at it.
func dispatch(g globals, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("no command given")
	}
	name, rest := args[0], args[1:]
	if name == "help" {
		if len(rest) == 0 {
			return flag.ErrHelp
		}
		c, ok := lookup(rest[0])
		if !ok {
			return usagef("help: unknown command %q", rest[0])
		}
		fmt.Fprint(stdout, c.usage)
		return nil
	}
	c, ok := lookup(name)
	if !ok {
		return usagef("unknown command %q", name)
	}
	err := c.run(g, name, rest, stdout, stderr)
	var ue usageError
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, c.usage)
		return nil
	case errors.As(err, &ue) && ue.cmd == "":
		ue.cmd = c.name
		return ue
	}
	return err
}
