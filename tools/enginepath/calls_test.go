package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path"
	"slices"
	"strings"
	"testing"
)

// The chain takes the functions that ran and call another that ran, found
// by name as chainOf says; the others are helpers.
func TestChain(t *testing.T) {
	sources := map[string]string{
		"session.go": `package recipes

type Session struct{}

func (s *Session) Retry(f func()) { f() }
func Leaf()                       {}
`,
		"b/b.go": `package b

func Leaf() {}
func Cut()  {}
`,
		"a/a.go": `package a

import (
	"strings"

	"github.com/zkrecipes/recipes"
	bee "github.com/zkrecipes/recipes/b"
)

type T struct{ f func() }

func Caller()    { bee.Leaf() }              // chain: pkg.F
func Local()     { helper() }                // chain: f
func helper()    {}                          // helper
func (t *T) M()  { t.other() }               // chain: x.f, a method of its package
func (t *T) other() {}                       // helper
func Closure(s *recipes.Session) {           // chain: the literal is Closure's
	s.Retry(func() { bee.Leaf() })
}
func Root(s *recipes.Session) { s.Retry(nil); recipes.Leaf() } // helper: the root does not count
func Std()       { strings.Cut("", "") }     // helper: strings is not b
func Recurse()   { Recurse() }               // helper: itself
func Builtin(m map[int]int) { delete(m, 1) } // helper: f is no method
func (t *T) delete() {}                      // helper
func NotRan()    { helper() }                // did not run
func CallsNotRan() { NotRan() }              // helper: NotRan did not run
func Generic()   { (gen[int])() }            // chain
func gen[X any]() {}                         // helper
func Field(t T)  { t.f() }                   // helper: no f ran
func Named(s struct{ Leaf func() }) { s.Leaf() } // chain: by name, b.Leaf
`,
	}
	var files []goFile
	ran := map[function]bool{}
	for rel, src := range sources {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, goFile{rel: rel, src: []byte(src), fset: fset, ast: f})
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name != "NotRan" {
				pkg := strings.TrimPrefix(path.Dir(rel), ".")
				ran[function{pkg: pkg, file: path.Base(rel), line: fset.Position(fd.Pos()).Line, name: fd.Name.Name}] = true
			}
		}
	}
	chain, err := chainOf(ran, files)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for f := range chain {
		got = append(got, path.Join(f.pkg, f.name))
	}
	slices.Sort(got)
	want := []string{"a/Caller", "a/Closure", "a/Generic", "a/Local", "a/M", "a/Named"}
	if !slices.Equal(got, want) {
		t.Errorf("chain = %q, want %q", got, want)
	}

	lost := maps.Clone(ran)
	lost[function{pkg: "b", file: "b.go", line: 9, name: "Gone"}] = true
	if _, err := chainOf(lost, files); err == nil || !strings.Contains(err.Error(), "b/b.go:9: Gone ran but is declared in no file read") {
		t.Errorf("chainOf with a function declared nowhere: err = %v", err)
	}
}
