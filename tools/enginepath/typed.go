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

// graphByType returns the graph of the functions of ran, the root's
// included, with each call resolved by its type. dir is the module's root.
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
//     what runs. There is an edge to each.
//
// A call of a function value, a variable, parameter or struct field of func
// type, or a function's result, is no edge: what it holds is not known
// here. It is kept as an indirect call. A function passed as a value
// without a call (sess.Retry(ctx, h.create)) is no edge either: where it
// is taken is kept among the values. A conversion or a builtin is no call.
// A function literal is part of the function it is written in, as coverage
// counts it.
func graphByType(ran map[function]bool, dir string) (*graph, error) {
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
	values := map[function][]string{}
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
		info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{},
			Types: map[ast.Expr]types.TypeAndValue{}}
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
				decls = append(decls, decl{f: f, fd: fd, fset: fset, info: info})
				declared[obj] = f
			}
		}
		takenAsValues(values, rel, fset, files, info, declared)
	}
	if err := undeclared(ran, decls); err != nil {
		return nil, err
	}

	// callees returns the functions of ran that call, in the body of d, may
	// call, and whether it calls a function value.
	callees := func(d decl, call *ast.CallExpr) ([]function, bool) {
		if tv := d.info.Types[call.Fun]; tv.IsType() || tv.IsBuiltin() {
			return nil, false
		}
		var id *ast.Ident
		switch x := callee(call).(type) {
		case *ast.FuncLit:
			return nil, false // its calls are d's
		case *ast.Ident:
			id = x
		case *ast.SelectorExpr:
			id = x.Sel
		default:
			return nil, true // a function's result: f()()
		}
		fn, ok := d.info.Uses[id].(*types.Func)
		if !ok {
			return nil, true // a variable, a parameter, a field
		}
		fn = fn.Origin()
		if g, ok := declared[fn]; ok {
			return []function{g}, false
		}
		recv := fn.Signature().Recv()
		if recv == nil {
			return nil, false
		}
		iface, ok := recv.Type().Underlying().(*types.Interface)
		if !ok {
			return nil, false
		}
		var to []function
		for _, t := range concrete {
			if !types.Implements(t, iface) {
				continue
			}
			m, _, _ := types.LookupFieldOrMethod(t, false, fn.Pkg(), fn.Name())
			if g, ok := declared[m.(*types.Func).Origin()]; ok {
				to = append(to, g)
			}
		}
		return to, false
	}
	g := newGraph(decls, callees)
	g.values = values
	return g, nil
}

// takenAsValues adds to values where files, of package rel, name a function
// of declared other than to call it: h.create in sess.Retry(ctx, h.create),
// refuse in Spec{Refuse: refuse}. It may be called through that value.
func takenAsValues(values map[function][]string, rel string, fset *token.FileSet, files []*ast.File, info *types.Info, declared map[*types.Func]function) {
	for _, file := range files {
		called := map[*ast.Ident]bool{}
		ast.Inspect(file, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				switch x := callee(call).(type) {
				case *ast.Ident:
					called[x] = true
				case *ast.SelectorExpr:
					called[x.Sel] = true
				}
			}
			return true
		})
		ast.Inspect(file, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && !called[id] {
				if fn, ok := info.Uses[id].(*types.Func); ok {
					if f, ok := declared[fn.Origin()]; ok {
						values[f] = append(values[f], at(rel, fset, id.Pos()))
					}
				}
			}
			return true
		})
	}
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
