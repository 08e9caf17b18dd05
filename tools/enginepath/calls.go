package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path"
	"strconv"
	"strings"
)

// A decl is a function of ran, its declaration and what resolves its calls:
// the imports of its file by name (graphByName), or its package's types
// (graphByType).
type decl struct {
	f       function
	fd      *ast.FuncDecl
	fset    *token.FileSet
	imports map[string]string
	info    *types.Info
}

// undeclared returns an error naming a function of ran that no decl
// declares, if any.
func undeclared(ran map[function]bool, decls []decl) error {
	found := map[function]bool{}
	for _, d := range decls {
		found[d.f] = true
	}
	for f := range ran {
		if !found[f] {
			return fmt.Errorf("%s:%d: %s ran but is declared in no file read", path.Join(f.pkg, f.file), f.line, f.name)
		}
	}
	return nil
}

// callee returns what call calls, without parentheses or type arguments:
// f in (f)(...) and in f[T](...).
func callee(call *ast.CallExpr) ast.Expr {
	switch x := ast.Unparen(call.Fun).(type) {
	case *ast.IndexExpr:
		return x.X
	case *ast.IndexListExpr:
		return x.X
	default:
		return x
	}
}

// graphByName is graphByType without types, the fallback where
// type-checking fails. files are the module's, parsed; each function of ran
// must be declared in one of them.
//
// A call is found by name, in the declaration's body and the function
// literals in it:
//
//   - f(...) calls the functions (not methods) of its own package named f;
//   - pkg.F(...), pkg an import of the file, those of that package named F;
//   - x.f(...), x no import, the functions and methods named f of its own
//     package and of every package of the module the file imports: x's
//     type is not known.
//
// So a name can stand for more than it calls: h.mu.Lock() is Mutex.Lock,
// ctx.Value() any Value that ran, a variable or a struct field of func type
// the function of its name, if one ran. That errs the safe way, making more
// callers, a longer chain and more reached. No call is known to be of a
// function value, and no function to be taken as one.
func graphByName(ran map[function]bool, files []goFile) (*graph, error) {
	var decls []decl
	named := map[string]map[string][]function{} // package, name: the functions of ran
	method := map[function]bool{}
	for _, file := range files {
		pkg := strings.TrimPrefix(path.Dir(file.rel), ".")
		imports := moduleImports(file.ast)
		for _, d := range file.ast.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			f := function{pkg: pkg, file: path.Base(file.rel), line: file.fset.Position(fd.Pos()).Line, name: fd.Name.Name}
			if !ran[f] {
				continue
			}
			decls = append(decls, decl{f: f, fd: fd, fset: file.fset, imports: imports})
			if named[pkg] == nil {
				named[pkg] = map[string][]function{}
			}
			named[pkg][f.name] = append(named[pkg][f.name], f)
			method[f] = fd.Recv != nil
		}
	}
	if err := undeclared(ran, decls); err != nil {
		return nil, err
	}

	// callees returns the functions of ran that call, in the body of d, may
	// call by its name.
	callees := func(d decl, call *ast.CallExpr) ([]function, bool) {
		var name string
		var pkgs []string
		methods := false
		switch x := callee(call).(type) {
		case *ast.Ident:
			name, pkgs = x.Name, []string{d.f.pkg}
		case *ast.SelectorExpr:
			name = x.Sel.Name
			if id, ok := x.X.(*ast.Ident); ok {
				if p, ok := d.imports[id.Name]; ok {
					pkgs = []string{p}
					break
				}
			}
			pkgs, methods = []string{d.f.pkg}, true
			for _, p := range d.imports {
				pkgs = append(pkgs, p)
			}
		default:
			return nil, false
		}
		var to []function
		for _, p := range pkgs {
			for _, g := range named[p][name] {
				if methods || !method[g] {
					to = append(to, g)
				}
			}
		}
		return to, false
	}
	return newGraph(decls, callees), nil
}

// moduleImports maps the import names of file to their packages relative
// to the module: "" for the root, "-" for a package outside the module.
func moduleImports(file *ast.File) map[string]string {
	imports := map[string]string{}
	for _, is := range file.Imports {
		p, _ := strconv.Unquote(is.Path.Value)
		rel := "-"
		if p == module {
			rel = ""
		} else if r, ok := strings.CutPrefix(p, module+"/"); ok {
			rel = r
		}
		imports[importName(is)] = rel
	}
	return imports
}
