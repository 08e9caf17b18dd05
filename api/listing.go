package main

import (
	"bytes"
	"fmt"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/exp/apidiff"
)

// render lists the exported API of m's packages, one declaration a line,
// sorted, in the manner of Go's own api/go1.*.txt: every line starts with
// the package it belongs to, so a diff of two listings reads alone.
// Packages of the module are named by their path within it ("locks",
// "internal/recipe"; the root by its name), others by their import path.
func render(m *apidiff.Module) []byte {
	var lines []string
	for _, p := range m.Packages {
		lines = append(lines, listPackage(m.Path, p)...)
	}
	slices.Sort(lines)
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func listPackage(module string, p *types.Package) []string {
	name := func(q *types.Package) string {
		if q.Path() == module {
			return q.Name()
		}
		if rel, ok := strings.CutPrefix(q.Path(), module+"/"); ok {
			return rel
		}
		return q.Path()
	}
	qual := func(q *types.Package) string {
		if q == p {
			return ""
		}
		return name(q)
	}
	str := func(t types.Type) string { return types.TypeString(t, qual) }
	sig := func(s *types.Signature) string { return strings.TrimPrefix(str(s), "func") }

	prefix := "pkg " + name(p) + ", "
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, prefix+fmt.Sprintf(format, args...)) }
	scope := p.Scope()
	for _, n := range scope.Names() {
		obj := scope.Lookup(n)
		if !obj.Exported() {
			continue
		}
		switch obj := obj.(type) {
		case *types.Const:
			add("const %s %s = %s", n, str(obj.Type()), obj.Val().ExactString())
		case *types.Var:
			add("var %s %s", n, str(obj.Type()))
		case *types.Func:
			add("func %s%s", n, sig(obj.Signature()))
		case *types.TypeName:
			if a, ok := obj.Type().(*types.Alias); ok {
				add("type %s%s = %s", n, typeParams(a.TypeParams(), str), str(a.Rhs()))
				continue
			}
			named, ok := obj.Type().(*types.Named)
			if !ok {
				continue
			}
			decl := n + typeParams(named.TypeParams(), str)
			listType(add, decl, named, str, sig)
			listMethods(add, n, named, sig)
		}
	}
	return lines
}

func typeParams(l *types.TypeParamList, str func(types.Type) string) string {
	if l.Len() == 0 {
		return ""
	}
	var ps []string
	for i := range l.Len() {
		ps = append(ps, l.At(i).Obj().Name()+" "+str(l.At(i).Constraint()))
	}
	return "[" + strings.Join(ps, ", ") + "]"
}

// listType lists a named type: a struct by its exported and embedded
// fields, an interface by its methods, any other by its underlying type.
// Whether a struct is comparable is part of its API, so it is said.
func listType(add func(string, ...any), decl string, named *types.Named,
	str func(types.Type) string, sig func(*types.Signature) string) {
	switch u := named.Underlying().(type) {
	case *types.Struct:
		comparable := ""
		if types.Comparable(named) {
			comparable = ", comparable"
		}
		add("type %s struct%s", decl, comparable)
		for f := range u.Fields() {
			switch {
			case f.Embedded():
				add("type %s struct, embedded %s", decl, str(f.Type()))
			case f.Exported():
				add("type %s struct, %s %s", decl, f.Name(), str(f.Type()))
			}
		}
	case *types.Interface:
		if !u.IsMethodSet() {
			add("type %s %s", decl, str(u))
			return
		}
		add("type %s interface", decl)
		unexported := false
		for m := range u.Methods() {
			if !m.Exported() {
				unexported = true
				continue
			}
			add("type %s interface, %s%s", decl, m.Name(), sig(m.Signature()))
		}
		if unexported {
			add("type %s interface, unexported methods", decl)
		}
	default:
		add("type %s %s", decl, str(u))
	}
}

// listMethods lists the exported methods of T and *T, promoted ones too,
// each with the receiver whose method set holds it.
func listMethods(add func(string, ...any), n string, named *types.Named, sig func(*types.Signature) string) {
	if types.IsInterface(named) {
		return
	}
	recv := n
	if tp := named.TypeParams(); tp.Len() > 0 {
		var ps []string
		for i := range tp.Len() {
			ps = append(ps, tp.At(i).Obj().Name())
		}
		recv += "[" + strings.Join(ps, ", ") + "]"
	}
	value := types.NewMethodSet(named)
	ptr := types.NewMethodSet(types.NewPointer(named))
	for sel := range ptr.Methods() {
		m := sel.Obj()
		if !m.Exported() {
			continue
		}
		r := "*" + recv
		if value.Lookup(m.Pkg(), m.Name()) != nil {
			r = recv
		}
		add("method (%s) %s%s", r, m.Name(), sig(m.Type().(*types.Signature)))
	}
}
