package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A goFile is one non-test .go file of the module, parsed.
type goFile struct {
	rel  string // path from the module's root, with slashes
	src  []byte
	fset *token.FileSet
	ast  *ast.File
}

// goFiles returns the non-test .go files of the module: not those of nested
// modules, testdata, or directories whose names start with "." or "_", which
// the go command ignores too.
func goFiles() ([]goFile, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	var files []goFile
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p == root {
				return nil
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil ||
				name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files = append(files, goFile{rel: filepath.ToSlash(rel), src: src, fset: fset, ast: f})
		return nil
	})
	return files, err
}

// moduleRoot returns the directory of the module's go.mod.
func moduleRoot() (string, error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	if root == "." {
		return "", errors.New("not in a module: run from the repository")
	}
	return root, nil
}

// listInitWiring writes each assignment, in an init function, to a name of
// an imported package, and their count.
func listInitWiring(w io.Writer) (int, error) {
	files, err := goFiles()
	if err != nil {
		return 0, err
	}
	values, inits := 0, 0
	for _, f := range files {
		for _, set := range initWiring(f) {
			fmt.Fprintln(w, strings.Join(set, "\n"))
			values += len(set)
			inits++
		}
	}
	fmt.Fprintf(w, "%d values set in other packages, by %d init functions\n", values, inits)
	return values, nil
}

// initWiring returns, for each init function of f that sets names of
// imported packages, those assignments, each as "file:line: pkg.Name".
func initWiring(f goFile) [][]string {
	imports := map[string]bool{}
	for _, is := range f.ast.Imports {
		imports[importName(is)] = true
	}
	var inits [][]string
	for _, d := range f.ast.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil || fd.Name.Name != "init" || fd.Body == nil {
			continue
		}
		var set []string
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				return false // runs later, if at all: not at init
			case *ast.AssignStmt:
				for _, lhs := range n.Lhs {
					if pkg := packageOf(lhs); pkg != "" && imports[pkg] {
						set = append(set, fmt.Sprintf("%s:%d: %s", f.rel, f.fset.Position(lhs.Pos()).Line, exprString(f, lhs)))
					}
				}
			}
			return true
		})
		if set != nil {
			inits = append(inits, set)
		}
	}
	return inits
}

// importName is the name a file uses for an import: its own, or the last
// element of the path that is not a major version ("v2").
func importName(is *ast.ImportSpec) string {
	if is.Name != nil {
		return is.Name.Name
	}
	p, _ := strconv.Unquote(is.Path.Value)
	base := path.Base(p)
	if majorVersion.MatchString(base) && path.Dir(p) != "." {
		base = path.Base(path.Dir(p))
	}
	return base
}

var majorVersion = regexp.MustCompile(`^v[0-9]+$`)

// packageOf returns the identifier that the selector chain e starts with,
// when e selects from it (pkg.X, pkg.X.Y, *pkg.P, pkg.M[k]); "" otherwise.
// A local variable named as an import would count too.
func packageOf(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok {
				return id.Name
			}
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		default:
			return ""
		}
	}
}

// exprString is e as written in f.
func exprString(f goFile, e ast.Expr) string {
	tf := f.fset.File(e.Pos())
	return string(f.src[tf.Offset(e.Pos()):tf.Offset(e.End())])
}

// listLongFiles writes the non-test, non-generated .go files over n lines,
// longest first, and their count.
func listLongFiles(w io.Writer, n int) (int, error) {
	files, err := goFiles()
	if err != nil {
		return 0, err
	}
	type long struct {
		rel   string
		lines int
	}
	var longs []long
	for _, f := range files {
		if lines := bytes.Count(f.src, []byte("\n")); lines > n && !ast.IsGenerated(f.ast) {
			longs = append(longs, long{f.rel, lines})
		}
	}
	slices.SortFunc(longs, func(a, b long) int { return cmp.Or(b.lines-a.lines, strings.Compare(a.rel, b.rel)) })
	for _, l := range longs {
		fmt.Fprintf(w, "%5d %s\n", l.lines, l.rel)
	}
	fmt.Fprintf(w, "%d shipped files over %d lines\n", len(longs), n)
	return len(longs), nil
}
