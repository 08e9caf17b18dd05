package recipes_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// publicPackages are the directories of the packages users import.
var publicPackages = []string{".", "locks", "barriers", "election", "zktest"}

// pointer finds what a doc sends its reader to: "see name" or "See
// Type.name", and doc links ([name], [Type.name]). Group 1 is the name.
var pointer = regexp.MustCompile(`(?i:\bsee) (?:[A-Za-z]\w*\.)?([a-z]\w*)\b|\[(?:[A-Za-z]\w*\.)?([a-z]\w*)\]`)

// TestDocsPointAtExportedNames: what go doc shows of a public package
// (its package doc and the docs of exported names) never sends the reader
// to one of the package's unexported names, which go doc does not show.
func TestDocsPointAtExportedNames(t *testing.T) {
	t.Parallel()
	for _, dir := range publicPackages {
		fset := token.NewFileSet()
		files := parseDir(t, fset, dir)
		hidden := unexported(files)
		pkg, err := doc.NewFromFiles(fset, files, "github.com/zkrecipes/recipes/"+dir)
		if err != nil {
			t.Fatal(err)
		}
		for where, text := range shown(pkg) {
			for _, m := range pointer.FindAllStringSubmatch(text, -1) {
				name := m[1] + m[2]
				if hidden[name] {
					t.Errorf("%s: the doc of %s points at %q, which go doc does not show: %q", dir, where, name, m[0])
				}
			}
		}
	}
}

// parseDir parses the package in dir, without its tests.
func parseDir(t *testing.T, fset *token.FileSet, dir string) []*ast.File {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		t.Fatalf("no Go files in %s", dir)
	}
	return files
}

// unexported returns the package's unexported top-level names and method
// names.
func unexported(files []*ast.File) map[string]bool {
	names := map[string]bool{}
	add := func(id *ast.Ident) {
		if id.Name != "_" && !unicode.IsUpper([]rune(id.Name)[0]) {
			names[id.Name] = true
		}
	}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				add(d.Name)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						add(s.Name)
					case *ast.ValueSpec:
						for _, n := range s.Names {
							add(n)
						}
					}
				}
			}
		}
	}
	return names
}

// shown returns the doc texts go doc -all shows, by what each documents.
func shown(pkg *doc.Package) map[string]string {
	texts := map[string]string{"package " + pkg.Name: pkg.Doc}
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			texts[strings.Join(v.Names, ", ")] = v.Doc
		}
	}
	funcs := func(fs []*doc.Func) {
		for _, f := range fs {
			name := f.Name
			if f.Recv != "" {
				name = strings.TrimPrefix(f.Recv, "*") + "." + f.Name
			}
			texts[name] = f.Doc
		}
	}
	values(pkg.Consts)
	values(pkg.Vars)
	funcs(pkg.Funcs)
	for _, typ := range pkg.Types {
		texts[typ.Name] = typ.Doc + fieldDocs(typ.Decl)
		values(typ.Consts)
		values(typ.Vars)
		funcs(typ.Funcs)
		funcs(typ.Methods)
	}
	return texts
}

// fieldDocs returns the comments on a type's exported fields or methods,
// which go doc shows in the type's declaration.
func fieldDocs(decl *ast.GenDecl) string {
	var b strings.Builder
	ast.Inspect(decl, func(n ast.Node) bool {
		if f, ok := n.(*ast.Field); ok {
			b.WriteString(f.Doc.Text())
			b.WriteString(f.Comment.Text())
		}
		return true
	})
	return b.String()
}
