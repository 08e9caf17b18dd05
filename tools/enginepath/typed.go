package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// chainByType returns the functions of ran, the root's left out, that call
// another function of ran outside the root, with each call resolved by its
// type. dir is the module's root.
//
// It type-checks from source the module's packages that ran and those of
// the module they import. The packages outside the module come from the
// export data that go list -export writes, which is how
// golang.org/x/tools/go/packages loads them. A call is an edge when it
// calls:
//
//   - a function or a concrete method of ran, other than the caller (a
//     method of a generic type counts as its declaration);
//   - a method of an interface, where a type of the module implements it
//     with a method of ran, its own or one of a field it embeds: that may be
//     what runs.
//
// A call of a function value, a variable or a struct field of func type, is
// no edge: what it holds is not known here. Nor is a function passed as a
// value without a call (sess.Retry(ctx, h.create)), a conversion, or a
// builtin. A function literal is part of the function it is written in, as
// coverage counts it.
func chainByType(ran map[function]bool, dir string) (map[function]bool, error) {
	pkgs, err := goList(dir, ran)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	exports := map[string]string{}
	for _, p := range pkgs {
		if p.Module == nil || !p.Module.Main {
			exports[p.ImportPath] = p.Export
		}
	}
	gc := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("go list wrote no export data for %s", path)
		}
		return os.Open(exports[path])
	})
	// The module's packages, checked from source, in the order go list
	// -deps lists them: each after those it imports.
	checked := map[string]*types.Package{}
	imp := importerFunc(func(path string) (*types.Package, error) {
		if p := checked[path]; p != nil {
			return p, nil
		}
		return gc.Import(path)
	})

	var decls []decl
	declared := map[*types.Func]function{} // the functions of ran
	var concrete []types.Type              // the module's types T and *T, not interfaces
	for _, p := range pkgs {
		if p.Module == nil || !p.Module.Main {
			continue
		}
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			files = append(files, f)
		}
		info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
		conf := types.Config{Importer: imp}
		if checked[p.ImportPath], err = conf.Check(p.ImportPath, fset, files, info); err != nil {
			return nil, err
		}
		scope := checked[p.ImportPath].Scope()
		for _, name := range scope.Names() {
			// A generic type is left out: it has no method set until
			// instantiated.
			if t, ok := scope.Lookup(name).Type().(*types.Named); ok && !types.IsInterface(t) && t.TypeParams().Len() == 0 {
				concrete = append(concrete, t, types.NewPointer(t))
			}
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, p.Module.Path), "/")
		if rel == "" {
			continue // the root is not counted: a call to it is no edge
		}
		for _, file := range files {
			for _, d := range file.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				pos := fset.Position(fd.Pos())
				f := function{pkg: rel, file: filepath.Base(pos.Filename), line: pos.Line, name: fd.Name.Name}
				if !ran[f] {
					continue
				}
				obj := info.Defs[fd.Name].(*types.Func)
				decls = append(decls, decl{f: f, body: fd.Body, info: info})
				declared[obj] = f
			}
		}
	}
	if err := undeclared(ran, decls); err != nil {
		return nil, err
	}

	// calls reports whether call, in the body of d, calls another function
	// of ran outside the root.
	calls := func(d decl, call *ast.CallExpr) bool {
		var id *ast.Ident
		switch x := callee(call).(type) {
		case *ast.Ident:
			id = x
		case *ast.SelectorExpr:
			id = x.Sel
		default:
			return false
		}
		fn, ok := d.info.Uses[id].(*types.Func) // not a variable, a type, a builtin
		if !ok {
			return false
		}
		fn = fn.Origin()
		if g, ok := declared[fn]; ok {
			return g != d.f
		}
		recv := fn.Signature().Recv()
		if recv == nil {
			return false
		}
		iface, ok := recv.Type().Underlying().(*types.Interface)
		return ok && slices.ContainsFunc(concrete, func(t types.Type) bool {
			if !types.Implements(t, iface) {
				return false
			}
			m, _, _ := types.LookupFieldOrMethod(t, false, fn.Pkg(), fn.Name())
			g, ok := declared[m.(*types.Func).Origin()]
			return ok && g != d.f
		})
	}
	return callers(decls, calls), nil
}

// A listed package is what go list -json writes of one package.
type listed struct {
	ImportPath, Dir, Export string
	GoFiles                 []string
	Module                  *struct {
		Path string
		Main bool
	}
	Error *struct{ Err string }
}

// goList lists the packages of ran and all they import, each after its
// imports, with export data for each, as go list -deps -export does in
// the module at dir.
func goList(dir string, ran map[function]bool) ([]listed, error) {
	patterns := map[string]bool{}
	for f := range ran {
		patterns["./"+f.pkg] = true
	}
	args := append([]string{"list", "-deps", "-export", "-json=ImportPath,Dir,Export,GoFiles,Module,Error"}, slices.Sorted(maps.Keys(patterns))...)
	cmd := exec.Command("go", args...)
	var stderr bytes.Buffer
	cmd.Dir, cmd.Stderr = dir, &stderr
	out, err := cmd.Output()
	if msg := bytes.TrimSpace(stderr.Bytes()); err != nil && len(msg) > 0 {
		err = fmt.Errorf("%w: %s", err, msg)
	}
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	var pkgs []listed
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
		var p listed
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("go list: %w", err)
		}
		if p.Error != nil {
			return nil, fmt.Errorf("go list: %s", p.Error.Err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// importerFunc makes a function a types.Importer.
type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }
