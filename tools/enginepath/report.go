package main

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A function is one declaration that go tool cover -func lists.
type function struct {
	pkg  string // import path, relative to the module ("" for the root)
	file string // base name
	line int
	name string
}

// leaves are the helper packages the spine leaves out: strings and sizes,
// calling nothing.
var leaves = []string{"internal/zpath", "internal/jute"}

// measure builds the probe, runs it under a ZooKeeper, and writes the report
// to w. It fails if the chain reached from Lock and Release has more
// functions than maxChain or more packages than maxChainPkgs, where they
// are not 0.
func measure(w io.Writer, windows, maxChain, maxChainPkgs int) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "enginepath-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin, out, exit := filepath.Join(tmp, "probe"), filepath.Join(tmp, "out"), filepath.Join(tmp, "exit")
	if err := os.Mkdir(exit, 0o755); err != nil {
		return err
	}
	if err := run(nil, "go", "build", "-cover", "-covermode=atomic", "-coverpkg="+module+"/...", "-o", bin, module+"/tools/enginepath"); err != nil {
		return err
	}
	// GOCOVERDIR takes the counters a -cover binary writes as it exits,
	// which nobody reads: without it, it warns.
	env := append(os.Environ(), "GOCOVERDIR="+exit)
	if err := run(env, "go", "run", module+"/tools/withzk", "--", bin, "-probe", out, "-windows", strconv.Itoa(windows)); err != nil {
		return err
	}

	var every, some map[function]bool
	for i := 1; i <= windows; i++ {
		ran, err := ranIn(filepath.Join(out, "w"+strconv.Itoa(i)))
		if err != nil {
			return err
		}
		if every == nil {
			every, some = ran, maps.Clone(ran)
			continue
		}
		maps.Copy(some, ran)
		maps.DeleteFunc(every, func(f function, _ bool) bool { return !ran[f] })
	}
	maps.DeleteFunc(some, func(f function, _ bool) bool { return every[f] })
	idle, err := ranIn(filepath.Join(out, idleDir))
	if err != nil {
		return err
	}

	g, err := graphByType(every, root)
	if err != nil {
		fmt.Fprintf(w, "# warning: the calls below were matched by name, which over-counts; type-checking failed: %v\n", err)
		var files []goFile
		if files, err = goFiles(); err == nil {
			g, err = graphByName(every, files)
		}
	}
	if err != nil {
		return err
	}
	reached, err := g.reach(entries...)
	if err != nil {
		return err
	}
	ch := report(w, every, some, idle, g, reached, windows)
	var over []string
	if maxChain > 0 && ch.funcs > maxChain {
		over = append(over, fmt.Sprintf("%d functions, over -max-chain %d", ch.funcs, maxChain))
	}
	if maxChainPkgs > 0 && ch.pkgs > maxChainPkgs {
		over = append(over, fmt.Sprintf("%d packages, over -max-chain-pkgs %d", ch.pkgs, maxChainPkgs))
	}
	if over != nil {
		return fmt.Errorf("the chain reached from Lock and Release, outside the root, crosses %s", strings.Join(over, " and "))
	}
	return nil
}

// A tally counts functions, and the packages and files they are in.
type tally struct{ funcs, pkgs, files int }

// report writes the functions that ran in every window by package, those
// that ran in some, the chain of g and the helpers, what of them is reached,
// and the counts; it returns the reached chain's.
func report(w io.Writer, every, some, idle map[function]bool, g *graph, reached map[function]bool, windows int) tally {
	fmt.Fprintf(w, `# The functions a free locks.Mutex.Lock and its Hold.Release ran, each window
# one Lock and Release, in all %d windows (go doc ./tools/enginepath).
# Coverage cannot tell goroutines apart: a function that ran only on one of
# the session's own goroutines (go-zookeeper's send and receive loops, the
# keep-alive) is counted as well; "reached from Lock and Release" below
# leaves them out. * marks those that also ran in a window with no lock
# taken. An init ran through a function literal it sets.
`, windows)
	byPkg := map[string][]function{}
	for f := range every {
		byPkg[f.pkg] = append(byPkg[f.pkg], f)
	}
	pkgs := slices.Sorted(maps.Keys(byPkg))
	pkgs = append(slices.DeleteFunc(pkgs, func(p string) bool { return p == "" }), "")
	for _, p := range pkgs {
		fs := byPkg[p]
		if p == "" {
			p = "root (Session), not counted"
		}
		fmt.Fprintf(w, "\n%s: %d\n", p, len(fs))
		list(w, fs, idle)
	}
	if len(some) > 0 {
		fmt.Fprintf(w, "\nran in some windows only, not counted: %d\n", len(some))
		list(w, slices.Collect(maps.Keys(some)), idle)
	}
	idleOnly := maps.Clone(idle)
	maps.DeleteFunc(idleOnly, func(f function, _ bool) bool { return every[f] || some[f] })
	fmt.Fprintf(w, "\nran only in the window with no lock taken, not counted: %d\n", len(idleOnly))
	list(w, slices.Collect(maps.Keys(idleOnly)), nil)

	chain := g.chain()
	chainPkg, helpers := map[string][]function{}, []function{}
	for f := range every {
		switch {
		case chain[f]:
			chainPkg[f.pkg] = append(chainPkg[f.pkg], f)
		case f.pkg != "":
			helpers = append(helpers, f)
		}
	}
	ch := count(chainPkg, func(string) bool { return true })
	fmt.Fprintf(w, "\nchain (ran and call another that ran, root excluded): %d\n", ch.funcs)
	for _, p := range slices.Sorted(maps.Keys(chainPkg)) {
		fmt.Fprintf(w, "%s: %d\n", p, len(chainPkg[p]))
		list(w, chainPkg[p], idle)
	}
	fmt.Fprintf(w, "\nhelpers (leaves: ran and call no other that ran): %d\n", len(helpers))
	list(w, helpers, idle)
	rch, rall, reachedChain := reportReach(w, g, every, reached, chain, idle)

	fmt.Fprintln(w, "\nfunctions per package (all, chain; reached, reached chain):")
	for _, p := range pkgs {
		if p != "" {
			n := len(slices.DeleteFunc(slices.Clone(byPkg[p]), func(f function) bool { return !reached[f] }))
			fmt.Fprintf(w, "  %-20s %3d %3d; %3d %3d\n", p, len(byPkg[p]), len(chainPkg[p]), n, len(reachedChain[p]))
		}
	}
	all := count(byPkg, func(p string) bool { return p != "" })
	spine := count(byPkg, func(p string) bool { return p != "" && !slices.Contains(leaves, p) })
	fmt.Fprintf(w, "total, root excluded: %d functions in %d packages, %d files\n", all.funcs, all.pkgs, all.files)
	fmt.Fprintf(w, "spine, also without %s: %d functions in %d packages, %d files\n",
		strings.Join(leaves, " and "), spine.funcs, spine.pkgs, spine.files)
	fmt.Fprintf(w, "chain: %d functions in %d packages (root excluded), %d files; helpers: %d functions\n",
		ch.funcs, ch.pkgs, ch.files, len(helpers))
	fmt.Fprintf(w, "root (Session): %d functions\n", len(byPkg[""]))
	fmt.Fprintf(w, "reached: %d functions in %d packages (root excluded); chain: %d in %d packages\n",
		rall.funcs, rall.pkgs, rch.funcs, rch.pkgs)
	return rch
}

// list writes fs, one a line, in the order of their files and lines.
func list(w io.Writer, fs []function, idle map[function]bool) { listNoted(w, fs, idle, nil) }

// listNoted is list with note(f) after each f, where note is not nil.
func listNoted(w io.Writer, fs []function, idle map[function]bool, note func(function) string) {
	slices.SortFunc(fs, func(a, b function) int {
		return cmp.Or(cmp.Compare(a.pkg, b.pkg), cmp.Compare(a.file, b.file), cmp.Compare(a.line, b.line))
	})
	pos := func(f function) string { return path.Join(f.pkg, f.file) + ":" + strconv.Itoa(f.line) }
	width := 0
	for _, f := range fs {
		width = max(width, len(pos(f)))
	}
	for _, f := range fs {
		mark := " "
		if idle[f] {
			mark = "*"
		}
		line := fmt.Sprintf("  %s %-*s  %s", mark, width, pos(f), f.name)
		if note != nil {
			line += ": " + note(f)
		}
		fmt.Fprintln(w, line)
	}
}

// count tallies the functions of the packages that keep reports true of.
func count(byPkg map[string][]function, keep func(string) bool) tally {
	var t tally
	for p, fs := range byPkg {
		if !keep(p) {
			continue
		}
		t.pkgs++
		t.funcs += len(fs)
		files := map[string]bool{}
		for _, f := range fs {
			files[f.file] = true
		}
		t.files += len(files)
	}
	return t
}

// ranIn returns the module's functions that ran in the window whose
// counters are in dir, but those of the tools.
func ranIn(dir string) (map[function]bool, error) {
	prof := dir + ".txt"
	if err := run(nil, "go", "tool", "covdata", "textfmt", "-i="+dir, "-o="+prof); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	cmd := exec.Command("go", "tool", "cover", "-func="+prof)
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go tool cover: %w", err)
	}
	// Each line: "github.com/zkrecipes/recipes/locks/hold.go:70:	newHold	100.0%".
	ran := map[function]bool{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 || fields[2] == "0.0%" || !strings.HasPrefix(fields[0], module) {
			continue
		}
		file, line, _ := strings.Cut(strings.TrimSuffix(fields[0], ":"), ":")
		n, err := strconv.Atoi(line)
		if err != nil {
			return nil, fmt.Errorf("go tool cover -func printed %q", sc.Text())
		}
		pkg := strings.TrimPrefix(strings.TrimPrefix(path.Dir(file), module), "/")
		if pkg == "tools" || strings.HasPrefix(pkg, "tools/") {
			continue
		}
		ran[function{pkg: pkg, file: path.Base(file), line: n, name: fields[1]}] = true
	}
	return ran, sc.Err()
}

// run runs a command with env (nil: this process's), its output on stderr.
func run(env []string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}
