// Command enginepath counts what issue 28 measures of the engine: the
// functions, files and packages that a free locks.Mutex.Lock and its
// Hold.Release run through (make enginepath), the values one package sets
// in another at init (-init-wiring), and the shipped files over a length
// (-long-files N).
//
//	go run ./tools/enginepath                        # the path, under a ZooKeeper
//	go run ./tools/enginepath -max-chain 20 -max-chain-pkgs 3
//	go run ./tools/enginepath -init-wiring
//	go run ./tools/enginepath -long-files 400
//
// # The path
//
// Run without a mode flag, enginepath builds itself with coverage of every
// package of the module (go build -cover -covermode=atomic
// -coverpkg=github.com/zkrecipes/recipes/...) into a temporary directory,
// runs that binary's -probe under tools/withzk (the ZooKeeper that
// ZK_SERVERS names, or a local one it starts), converts the counters with go
// tool covdata textfmt, lists them with go tool cover -func, and prints
// every function that ran, by package, and the counts. It removes its
// temporary files.
//
// The probe connects a Session, makes a Mutex at a path of its own, and
// takes and releases it three times so that the path exists and every
// one-time setup is done. Then, in each of -windows windows, it clears the
// counters (runtime/coverage.ClearCounters), takes the mutex once and
// releases it, waits until no goroutine runs code of a package below the
// root (what the Lock and Release started has finished), and writes the
// counters. A function counts if it ran in every window; one that ran in
// some only is listed apart and not counted (it ran by timing: a keep-alive,
// a late event). Last comes an idle window as long as half the session
// timeout, five keep-alives, with no lock taken.
//
// A function is a declaration, as go tool cover -func lists them: a
// function literal counts as the function it is written in. So an init
// that sets a function variable in another package (as znode.SentOf was) shows as
// that init, because the literal it set ran.
//
// The counts leave out the root package (the Session: its retry loop, its
// connection wrapper, its event callback), which issue 28 does not count;
// its functions are listed apart. The spine leaves out internal/zpath and
// internal/jute too: helpers of strings and sizes, which call nothing.
//
// The chain is what a reader steps through: the functions counted that call
// another function counted. The others, which call none, are the helpers
// (name parsing, sorting, path joins, signals, error wrappers), listed
// apart. Each call is resolved by its type with go/types: the module's
// packages are checked from source, the others read from the export data
// of go list -export. So h.mu.Lock() calls sync.Mutex.Lock, not
// locks.Mutex.Lock; a call through an interface calls each method that ran
// of a type of the module that implements it; a call of a function value
// (a variable, parameter or struct field of func type), or a function
// passed as a value and called elsewhere, is no call (graphByType says how
// calls are found). A go or defer statement's call is a call. If
// type-checking fails, a warning line says so and calls are matched by
// name, which over-counts (graphByName).
//
// What it cannot tell: coverage counts what ran in the process, not on
// which goroutine. The session's own goroutines run while the lock is
// taken: go-zookeeper's send loop calls the root's connection wrapper and
// through it znode.Sent.Written, which, for the lock's own create, calls
// internal/jute; the keep-alive syncs. In the counts of all that ran, a
// function that ran only on one of them counts like one on the Lock's own
// path. Those that also ran in the idle window are marked *, as the session
// runs them with no lock taken, though the lock may run them too; those
// that ran only then are listed apart.
//
// # Reached from Lock and Release
//
// So the report also follows the calls from locks.(*Mutex).Lock and
// locks.(*Hold).Release, among the functions that ran. The root's functions
// are in the graph too. A call into the root, such as sess.Retry, reaches
// that root function, and what it calls is reached in turn: Retry reaches
// args.Context and znode.CtxErr. The op that Retry calls is a parameter, so
// that call is not followed; a literal passed as op is part of its caller,
// whose calls are followed. A function that ran only on the session's
// goroutines, such as znode.Sent.Written and internal/jute, is not reached.
//
// What is reached is listed by package, the chain apart from the helpers.
// The reached chain is what is reached and calls another reached function
// outside the root; the reached helpers are the rest. The root's reached
// functions are listed apart and not counted.
//
// The reach cannot follow a call of a function value: seqnode.Spec.Refuse,
// a Predicate, a callback. So nothing hides, two more lists say what it
// leaves out. The first is what ran but was not reached, each with why it
// may have run. It was taken as a value somewhere, it was called by
// functions not reached, a function literal written in it ran (it returned
// one, as seqnode.FirstN does), or nothing in the module called it
// (go-zookeeper did). The second is each call of a function value in a
// reached function, with its place and text: the indirect calls not
// followed.
//
// It measures the free path in its steady state: one session, no other
// holder or waiter, the lock's parent already made.
//
// # Wiring and long files
//
// -init-wiring parses every non-test .go file of the module (go/parser,
// go/ast) and lists each assignment in an init function whose left side is
// a selector on an imported package (as znode.SentOf = ... was), with its file and
// line, and their count. Assignments inside a function literal are not at
// init and are left out. -long-files N lists the non-test, non-generated .go
// files over N lines, with their lengths. Both skip the nested modules (api,
// examples/testkit), testdata and hidden directories.
//
// With -check, either mode exits 1 if it lists anything: make lint runs
// -check -init-wiring -long-files 400, so that no package sets a value in
// another at init and no shipped file grows past 400 lines.
//
// -max-chain and -max-chain-pkgs make the path's check fail (exit 1) when
// the chain reached from Lock and Release has more functions, or functions
// in more packages, than they say; 0, the default, is no limit. They bound
// the reached chain, not the chain of all that ran, so that the session's
// goroutines do not count against the lock.
package main

import (
	"flag"
	"fmt"
	"os"
)

// module is the import path of the module measured.
const module = "github.com/zkrecipes/recipes"

func main() {
	probe := flag.String("probe", "", "internal: take the measurement, writing counters under `dir` (the binary must be built with -cover)")
	windows := flag.Int("windows", 5, "measured windows, each one Lock and Release; a function counts if it ran in all")
	maxChain := flag.Int("max-chain", 0, "exit 1 if the chain reached from Lock and Release (outside the root, calling another reached) has more functions than this (0: no limit)")
	maxChainPkgs := flag.Int("max-chain-pkgs", 0, "exit 1 if the reached chain's functions are in more packages than this (0: no limit)")
	initWiring := flag.Bool("init-wiring", false, "list the values init functions set in other packages")
	longFiles := flag.Int("long-files", 0, "list the shipped .go files over `n` lines")
	check := flag.Bool("check", false, "with -init-wiring or -long-files: exit 1 if anything is listed")
	flag.Parse()
	if flag.NArg() > 0 || *windows < 1 || *maxChain < 0 || *maxChainPkgs < 0 || *longFiles < 0 {
		fmt.Fprintln(os.Stderr, "enginepath: no arguments, -windows at least 1, limits not negative")
		flag.Usage()
		os.Exit(2)
	}
	var err error
	switch {
	case *probe != "":
		err = runProbe(*probe, *windows)
	case *initWiring || *longFiles > 0:
		var wired, long int
		if *initWiring {
			wired, err = listInitWiring(os.Stdout)
		}
		if err == nil && *longFiles > 0 {
			long, err = listLongFiles(os.Stdout, *longFiles)
		}
		if err == nil && *check && wired+long > 0 {
			err = fmt.Errorf("-check: %d values set at init in other packages, %d files over %d lines", wired, long, *longFiles)
		}
	default:
		err = measure(os.Stdout, *windows, *maxChain, *maxChainPkgs)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "enginepath: %v\n", err)
		os.Exit(1)
	}
}
