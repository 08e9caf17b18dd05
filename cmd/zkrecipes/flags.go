package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
)

// globals are the flags every command shares.
type globals struct {
	servers        []string
	sessionTimeout time.Duration
	connectTimeout time.Duration // what bounds connecting (see boundConnect); 0: the library's default
	connectSet     bool          // --connect-timeout gave connectTimeout
	connectWhy     string        // where connectTimeout came from, for the error when it passes
	giveUpRefused  bool          // connect gives up sooner while every attempt is refused (refusedBound)
	notes          io.Writer     // where connect reports a granted session timeout other than the one asked; nil: nowhere
	auth           []credential  // --auth, after $ZKRECIPES_AUTH
	acl            []zk.ACL      // --acl, else $ZKRECIPES_ACL; nil: the library's default
	parentACL      []zk.ACL      // --parent-acl, else $ZKRECIPES_PARENT_ACL; nil: the library's default
	tlsCA          string        // --tls-ca: PEM file of the CAs to trust
	tlsCert        string        // --tls-cert and --tls-key: PEM files of a client certificate
	tlsKey         string
}

func parseGlobals(args []string) (globals, []string, error) {
	defServers := os.Getenv("ZK_SERVERS")
	if defServers == "" {
		defServers = "127.0.0.1:2181"
	}
	g := globals{servers: splitServers(defServers), sessionTimeout: 10 * time.Second}
	if err := accessFromEnv(&g); err != nil {
		return g, nil, err
	}
	fs := flag.NewFlagSet("zkrecipes", flag.ContinueOnError)
	addGlobalFlags(fs, &g)
	if err := parse(fs, args); err != nil {
		return g, nil, err
	}
	if len(g.servers) == 0 {
		return g, nil, usagef("--servers is empty")
	}
	return g, fs.Args(), nil
}

// newFlagSet returns a command's flag set, which also takes the global
// flags (--servers, --session-timeout), so they may come after the command
// name too, where they override what came before it.
func newFlagSet(name string, g *globals) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	addGlobalFlags(fs, g)
	return fs
}

func addGlobalFlags(fs *flag.FlagSet, g *globals) {
	fs.Func("servers", "", func(v string) error {
		servers := splitServers(v)
		if len(servers) == 0 {
			return errors.New("is empty")
		}
		g.servers = servers
		return nil
	})
	fs.Var(sessionTimeoutValue{&g.sessionTimeout}, "session-timeout", "")
	fs.Func("connect-timeout", "", func(s string) error {
		if err := (durationValue{&g.connectTimeout, false}).Set(s); err != nil {
			return err
		}
		g.connectSet, g.connectWhy = true, "--connect-timeout"
		return nil
	})
	fs.Var(authValue{&g.auth}, "auth", "")
	fs.Var(aclValue{&g.acl}, "acl", "")
	fs.Var(aclValue{&g.parentACL}, "parent-acl", "")
	// Not StringVar, which would reset what the flags before the command
	// set when a command's flag set registers them again.
	for name, p := range map[string]*string{"tls-ca": &g.tlsCA, "tls-cert": &g.tlsCert, "tls-key": &g.tlsKey} {
		fs.Func(name, "", func(v string) error { *p = v; return nil })
	}
}

// durationValue is a duration flag; only --timeout may be 0.
type durationValue struct {
	d      *time.Duration
	zeroOK bool
}

func (v durationValue) String() string {
	if v.d == nil {
		return ""
	}
	return v.d.String()
}

func (v durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return errors.New("not a duration (e.g. 500ms, 30s, 2m)")
	case d < 0 && v.zeroOK:
		return errors.New("must not be negative")
	case d <= 0 && !v.zeroOK:
		return errors.New("must be positive")
	}
	*v.d = d
	return nil
}

// sessionTimeoutValue is --session-timeout: a duration ZooKeeper can be asked
// for, 1ms to recipes.MaxSessionTimeout (go-zookeeper sends it as a 32-bit
// count of milliseconds). Within that, the server grants what its minSessionTimeout and
// maxSessionTimeout allow, and connect reports a grant that differs.
type sessionTimeoutValue struct{ d *time.Duration }

func (v sessionTimeoutValue) String() string { return durationValue{v.d, false}.String() }

func (v sessionTimeoutValue) Set(s string) error {
	var d time.Duration
	if err := (durationValue{&d, false}).Set(s); err != nil {
		return err
	}
	if d < time.Millisecond || d > recipes.MaxSessionTimeout {
		return fmt.Errorf("ZooKeeper takes a session timeout from %v to %v", time.Millisecond, recipes.MaxSessionTimeout)
	}
	*v.d = d
	return nil
}

// onceValue refuses a flag given twice.
type onceValue struct {
	flag.Value
	set bool
}

func (v *onceValue) Set(s string) error {
	if v.set {
		return errors.New("given twice")
	}
	v.set = true
	return v.Value.Set(s)
}

func (v *onceValue) IsBoolFlag() bool {
	b, ok := v.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// parse parses args with fs, each flag at most once, and turns its errors
// into usage errors that name the flag and the value.
func parse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	fs.VisitAll(func(f *flag.Flag) {
		if r, ok := f.Value.(interface{ repeatable() bool }); ok && r.repeatable() {
			return
		}
		if _, ok := f.Value.(*onceValue); !ok {
			f.Value = &onceValue{Value: f.Value}
		}
	})
	err := fs.Parse(args)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return err
	}
	// The flag package says `invalid value "x" for flag -timeout: why`.
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
		if value, flagWhy, ok := strings.Cut(rest, " for flag -"); ok {
			name, why, _ := strings.Cut(flagWhy, ": ")
			if name == "auth" {
				value = "(not shown)" // credentials stay out of logs
			}
			msg = fmt.Sprintf("--%s %s: %s", name, value, why)
		}
	}
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		msg = "unknown flag " + flagName(name)
	}
	if fs.Name() == "zkrecipes" {
		return usagef("%s", msg)
	}
	return usagef("%s: %s", fs.Name(), msg)
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
	var positional []string
	for {
		if err := parse(fs, args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// isHelp reports whether args ask for help before any "--".
func isHelp(args []string) bool {
	if i := slices.Index(args, "--"); i >= 0 {
		args = args[:i]
	}
	return slices.ContainsFunc(args, func(a string) bool { return a == "-h" || a == "-help" || a == "--help" })
}

// splitCommand splits args at the first "--" into the recipe's own
// arguments and the command to run.
func splitCommand(name string, args []string) (own, command []string, err error) {
	if isHelp(args) {
		return nil, nil, flag.ErrHelp
	}
	i := slices.Index(args, "--")
	switch {
	case i < 0:
		return nil, nil, usagef("%s: missing -- before the command to run", name)
	case i == len(args)-1:
		return nil, nil, usagef("%s: no command after --", name)
	}
	return args[:i], args[i+1:], nil
}

// findCommand checks that the command to run can be started (its name is
// found in $PATH, or the file it names is executable) before anything
// connects: a command that cannot start would otherwise be found out only
// once the recipe is held, having created nodes and kept others waiting.
// name is the zkrecipes command, for the message.
func findCommand(name string, command []string) error {
	_, err := exec.LookPath(command[0])
	if err == nil {
		return nil
	}
	// exec's error repeats the name; the cause alone says why.
	var ee *exec.Error
	var pe *fs.PathError
	if errors.As(err, &ee) {
		err = ee.Err
	}
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return exitError{exitCannotRun, fmt.Errorf("%s: cannot run %s: %v", name, command[0], err)}
}

// waitFlags are the flags of a command that waits: --timeout D, -n,
// --data S (elect's --id ID) and -q (see waitFlagsUsage).
type waitFlags struct {
	timeout    time.Duration
	timeoutSet bool
	once       bool
	data       string
	quiet      bool
}

// addWaitFlags adds them to fs, the node's data as dataFlag.
func addWaitFlags(fs *flag.FlagSet, dataFlag string) *waitFlags {
	w := &waitFlags{}
	fs.Func("timeout", "", func(s string) error {
		w.timeoutSet = true
		return durationValue{&w.timeout, true}.Set(s)
	})
	fs.BoolVar(&w.once, "n", false, "")
	fs.StringVar(&w.data, dataFlag, "", "")
	fs.BoolVar(&w.quiet, "q", false, "")
	return w
}

// status is where the command's status lines go (acquired, waiting,
// entered, left): stderr, or nowhere with -q. Errors and warnings go to
// stderr regardless.
func (w *waitFlags) status(stderr io.Writer) io.Writer {
	if w.quiet {
		return io.Discard
	}
	return stderr
}

// tryOnceConnectTimeout bounds connecting for a command that tries once (-n),
// unless --connect-timeout says otherwise: it is asked for an answer now.
const tryOnceConnectTimeout = 5 * time.Second

// boundConnect sets what bounds connecting for a command that waits up to
// wait (0: as long as it takes) or tries once: --connect-timeout if given,
// else wait, else tryOnceConnectTimeout with -n, else the library's default.
func (g *globals) boundConnect(wait time.Duration, once bool) {
	switch {
	case g.connectSet:
	case wait > 0:
		g.connectTimeout, g.connectWhy = wait, "--timeout, which bounds connecting too"
	case once:
		g.connectTimeout, g.connectWhy = tryOnceConnectTimeout, "the default --connect-timeout with -n"
	}
}

// tryOnce reports whether the command should try once (-n or --timeout 0)
// rather than wait; it refuses both flags at once.
func (w *waitFlags) tryOnce(name string) (bool, error) {
	if w.once && w.timeoutSet {
		return false, usagef("%s: -n and --timeout exclude each other", name)
	}
	return w.once || w.timeoutSet && w.timeout == 0, nil
}

// flagName is how the help writes a flag: --name, or -n for one letter.
func flagName(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// flagSet reports whether the command line gave the flag.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
