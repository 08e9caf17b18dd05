// Command api holds the public API of the module at -root to the last
// release's (make api), and writes a release's baseline (make api-export).
//
// A baseline is two files. NAME.api is what apidiff compares with: the
// export data of each public package, in the format that
// golang.org/x/exp/cmd/apidiff -m -w writes, so that command reads it too.
// It is binary. NAME.txt lists the same API, one declaration a line,
// rendered from NAME.api, for a reviewer to read in a diff. The check
// fails when the listing is not the rendering of the export data, so
// neither changes without the other.
//
// The verdict is the exit status: 0 compatible, 1 an incompatible change
// or a stale listing, 2 the module or the baseline could not be read.
// Nothing parses this program's output.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/token"
	"go/types"
	"os"
	"strings"

	"golang.org/x/exp/apidiff"
	"golang.org/x/tools/go/packages"
)

func main() {
	root := flag.String("root", "..", "the module's root `directory`")
	export := flag.Bool("export", false, "write the baseline from the module instead of checking the module against it")
	list := flag.Bool("list", false, "write BASE.txt from BASE.api only")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: api [-root dir] [-export | -list] BASE\n"+
			"BASE.api is the export data of the released API, BASE.txt its listing\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	base := flag.Arg(0)
	var err error
	switch {
	case *export:
		err = write(*root, base)
	case *list:
		err = writeListing(base)
	default:
		err = check(*root, base)
	}
	var bad incompatible
	switch {
	case errors.As(err, &bad):
		fmt.Fprintln(os.Stderr, bad)
		os.Exit(1)
	case err != nil:
		fmt.Fprintf(os.Stderr, "api: %v\n", err)
		os.Exit(2)
	}
}

// incompatible is a verdict against the module, not a failure to reach one.
type incompatible string

func (e incompatible) Error() string { return string(e) }

func check(root, base string) error {
	fset := token.NewFileSet()
	old, err := readExportData(fset, base+".api")
	if err != nil {
		return err
	}
	old.Packages = public(old)
	listing, err := os.ReadFile(base + ".txt")
	if err != nil {
		return err
	}
	if want := render(old); !bytes.Equal(listing, want) {
		return incompatible(fmt.Sprintf("%s.txt is not the listing of %s.api: "+
			"it is written from it (go run . -list %s, in api/), never by hand", base, base, base))
	}
	cur, err := load(fset, root)
	if err != nil {
		return err
	}
	cur.Packages = public(cur)
	var report bytes.Buffer
	if err := apidiff.ModuleChanges(old, cur).TextIncompatible(&report, false); err != nil {
		return err
	}
	if report.Len() > 0 {
		return incompatible(fmt.Sprintf("incompatible with %s.api (listed in %s.txt):\n%s", base, base,
			strings.TrimSuffix(report.String(), "\n")))
	}
	fmt.Printf("api: compatible with %s.api\n", base)
	return nil
}

func write(root, base string) error {
	fset := token.NewFileSet()
	m, err := load(fset, root)
	if err != nil {
		return err
	}
	m.Packages = public(m)
	if err := writeExportData(fset, m, base+".api"); err != nil {
		return err
	}
	return writeListing(base)
}

// writeListing renders BASE.txt from BASE.api, as check renders it.
func writeListing(base string) error {
	m, err := readExportData(token.NewFileSet(), base+".api")
	if err != nil {
		return err
	}
	m.Packages = public(m)
	return os.WriteFile(base+".txt", render(m), 0o666)
}

// load type-checks every package of the module at root.
func load(fset *token.FileSet, root string) (*apidiff.Module, error) {
	cfg := &packages.Config{
		Dir:  root,
		Fset: fset,
		Mode: packages.NeedName | packages.NeedTypes | packages.NeedModule,
	}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		return nil, err
	}
	if len(pkgs) == 0 || pkgs[0].Module == nil {
		return nil, fmt.Errorf("no module's packages in %s", root)
	}
	m := &apidiff.Module{Path: pkgs[0].Module.Path}
	var errs []error
	for _, p := range pkgs {
		for _, e := range p.Errors {
			// go list repeats the type checker's errors in one of its own.
			if e.Kind != packages.ListError || len(p.TypeErrors) == 0 {
				errs = append(errs, e)
			}
		}
		m.Packages = append(m.Packages, p.Types)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return m, nil
}

// public keeps the packages users import: not internal ones, nor the
// suites and tools under tests/ and tools/, importable as they are.
func public(m *apidiff.Module) []*types.Package {
	var keep []*types.Package
	for _, p := range m.Packages {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.Path(), m.Path), "/")
		first, _, _ := strings.Cut(rel, "/")
		if first == "tests" || first == "tools" || strings.Contains("/"+rel+"/", "/internal/") {
			continue
		}
		keep = append(keep, p)
	}
	return keep
}
