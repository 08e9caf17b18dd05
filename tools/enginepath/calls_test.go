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
	want := []string{"a/Caller", "a/Closure", "a/Generic", "a/GenericType", "a/Local", "a/Locker", "a/M", "a/Promoted", "a/Valuer"}
	for _, c := range []struct {
		name    string
		chainOf func(map[function]bool) (map[function]bool, error)
		want    []string
	}{
		{"chainByType", func(ran map[function]bool) (map[function]bool, error) { return chainByType(ran, dir) }, want},
		{"chainByName", func(ran map[function]bool) (map[function]bool, error) { return chainByName(ran, files) },
			slices.Sorted(slices.Values(append(want, "a/Ctx", "a/Named", "a/Sync")))},
	} {
		chain, err := c.chainOf(ran)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var got []string
		for f := range chain {
			got = append(got, path.Join(f.pkg, f.name))
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: chain = %q, want %q", c.name, got, c.want)
		}

		lost := maps.Clone(ran)
		lost[function{pkg: "b", file: "b.go", line: 9, name: "Gone"}] = true
		if _, err := c.chainOf(lost); err == nil || !strings.Contains(err.Error(), "b/b.go:9: Gone ran but is declared in no file read") {
			t.Errorf("%s with a function declared nowhere: err = %v", c.name, err)
		}
	}
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
