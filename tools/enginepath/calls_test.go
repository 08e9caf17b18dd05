package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The chain takes the functions that ran and call another that ran; the
// others are helpers. Each function of testdata/chain/a says which it is,
// and all of them ran but NotRan. Matched by name, the chain takes three
// more: their calls have the name of a function that ran, and call another.
func TestChain(t *testing.T) {
	const dir = "testdata/chain"
	ran, files := chainModule(t, dir)
	want := []string{"a/Caller", "a/Closure", "a/Generic", "a/GenericType", "a/Local", "a/Locker", "a/M", "a/Promoted", "a/Valuer",
		"locks/Lock", "locks/watch"}
	for _, c := range graphsOf(t, dir, files, want, "a/Ctx", "a/Named", "a/Sync") {
		g, err := c.graphOf(ran)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := names(g.chain()); !slices.Equal(got, c.want) {
			t.Errorf("%s: chain = %q, want %q", c.name, got, c.want)
		}

		lost := maps.Clone(ran)
		lost[function{pkg: "b", file: "b.go", line: 9, name: "Gone"}] = true
		if _, err := c.graphOf(lost); err == nil || !strings.Contains(err.Error(), "b/b.go:9: Gone ran but is declared in no file read") {
			t.Errorf("%s with a function declared nowhere: err = %v", c.name, err)
		}
	}
}

// Reached from locks.Mutex.Lock and locks.Hold.Release of testdata/chain
// are what they call, through the root and go statements, but not what a
// goroutine of the root not reached calls, nor what a func field holds:
// each function of testdata/chain/locks says which. Name matching reaches
// the same here.
func TestReach(t *testing.T) {
	const dir = "testdata/chain"
	ran, files := chainModule(t, dir)
	want := []string{"Retry", "b/Check", "b/Cut", "b/Leaf", "locks/Lock", "locks/Release", "locks/watch"}
	for _, c := range graphsOf(t, dir, files, want) {
		g, err := c.graphOf(ran)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		reached, err := g.reach(entries...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := names(reached); !slices.Equal(got, c.want) {
			t.Errorf("%s: reached = %q, want %q", c.name, got, c.want)
		}
		maps.DeleteFunc(reached, func(f function, _ bool) bool { return !g.chain()[f] })
		if got, want := names(reached), []string{"locks/Lock", "locks/watch"}; !slices.Equal(got, want) {
			t.Errorf("%s: reached chain = %q, want %q", c.name, got, want)
		}
		if _, err := g.reach("locks.Mutex.TryLock"); err == nil {
			t.Errorf("%s: reach from a function that did not run: no error", c.name)
		}
	}

	g, err := graphByType(ran, dir)
	if err != nil {
		t.Fatal(err)
	}
	reached, _ := g.reach(entries...)
	wantIndirect := []string{"locks/locks.go:32: h.m.spec.Refuse (in Release)", "session.go:9: f (in Retry)"}
	if got := g.indirectOf(reached); !slices.Equal(got, wantIndirect) {
		t.Errorf("indirect calls = %q, want %q", got, wantIndirect)
	}
	for name, want := range map[string]string{
		"locks/refuse":  "taken as a value at locks/locks.go:39",
		"b/Written":     "called by (root)/loop",
		"loop":          "called by (root)/Connect",
		"Connect":       "no caller in the module",
		"a/CallsNotRan": "no caller in the module",
	} {
		f := byName(t, ran, name)
		if got := g.unreached(f); !strings.HasPrefix(got, want) {
			t.Errorf("why %s ran = %q, want %q...", name, got, want)
		}
	}
}

// A graphs is a way to make the graph of testdata, and what a test wants
// of it.
type graphs struct {
	name    string
	graphOf func(map[function]bool) (*graph, error)
	want    []string
}

// graphsOf returns the graph by type, wanting want, and by name, wanting
// want and more.
func graphsOf(t *testing.T, dir string, files []goFile, want []string, more ...string) []graphs {
	t.Helper()
	return []graphs{
		{"graphByType", func(ran map[function]bool) (*graph, error) { return graphByType(ran, dir) }, want},
		{"graphByName", func(ran map[function]bool) (*graph, error) { return graphByName(ran, files) },
			slices.Sorted(slices.Values(append(slices.Clone(want), more...)))},
	}
}

// names returns the functions of fs as "pkg/name", sorted.
func names(fs map[function]bool) []string {
	var got []string
	for f := range fs {
		got = append(got, path.Join(f.pkg, f.name))
	}
	slices.Sort(got)
	return got
}

// byName returns the function of ran named "pkg/name".
func byName(t *testing.T, ran map[function]bool, name string) function {
	t.Helper()
	for f := range ran {
		if path.Join(f.pkg, f.name) == name {
			return f
		}
	}
	t.Fatalf("no function %s ran", name)
	return function{}
}

// chainModule parses the module at dir and returns its files, and its
// functions but NotRan, as ran.
func chainModule(t *testing.T, dir string) (map[function]bool, []goFile) {
	t.Helper()
	var files []goFile
	ran := map[function]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(p, ".go") {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files = append(files, goFile{rel: rel, fset: fset, ast: f})
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name != "NotRan" {
				pkg := strings.TrimPrefix(path.Dir(rel), ".")
				ran[function{pkg: pkg, file: path.Base(rel), line: fset.Position(fd.Pos()).Line, name: fd.Name.Name}] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ran, files
}
