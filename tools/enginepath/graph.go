package main

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// entries are the functions the reach starts from, as graph.named names
// them: what the probe calls in each window.
var entries = []string{"locks.Mutex.Lock", "locks.Hold.Release"}

// A graph is the calls among the functions that ran, the root's included.
type graph struct {
	calls    map[function]map[function]bool // the functions of ran each one calls, but itself
	indirect map[function][]string          // each one's calls of a function value: "pkg/file:line: expr"
	values   map[function][]string          // where each is taken as a value, not called: "pkg/file:line"
	named    map[string]function            // each by package, receiver and name: "locks.Mutex.Lock"
	literals map[function]bool              // those with a function literal written in them
}

// newGraph returns the graph of decls, each of a function of ran, whose
// calls callees resolves: the functions of ran a call may call, and whether
// it calls a function value instead. Calls in a function literal are those
// of the declaration it is written in, as coverage counts them; a go or
// defer statement's call is a call like any other.
func newGraph(decls []decl, callees func(decl, *ast.CallExpr) (to []function, indirect bool)) *graph {
	g := &graph{calls: map[function]map[function]bool{}, indirect: map[function][]string{},
		values: map[function][]string{}, named: map[string]function{}, literals: map[function]bool{}}
	for _, d := range decls {
		g.named[qualified(d.f.pkg, d.fd)] = d.f
		g.calls[d.f] = map[function]bool{}
		ast.Inspect(d.fd.Body, func(n ast.Node) bool {
			if _, ok := n.(*ast.FuncLit); ok {
				g.literals[d.f] = true
			}
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			to, indirect := callees(d, call)
			for _, h := range to {
				if h != d.f {
					g.calls[d.f][h] = true
				}
			}
			if indirect {
				g.indirect[d.f] = append(g.indirect[d.f], at(d.f.pkg, d.fset, call.Pos())+": "+types.ExprString(call.Fun))
			}
			return true
		})
	}
	return g
}

// chain returns the functions outside the root that call another outside
// the root: a call into the root is no edge of the chain.
func (g *graph) chain() map[function]bool {
	chain := map[function]bool{}
	for f, to := range g.calls {
		for h := range to {
			if f.pkg != "" && h.pkg != "" {
				chain[f] = true
			}
		}
	}
	return chain
}

// reach returns the functions that the functions named from call, directly
// or through others, the root's included: a call into the root reaches the
// root's function, and what it calls is reached in turn. A call of a
// function value reaches nothing.
func (g *graph) reach(from ...string) (map[function]bool, error) {
	reached := map[function]bool{}
	var next []function
	for _, name := range from {
		f, ok := g.named[name]
		if !ok {
			return nil, fmt.Errorf("%s did not run in every window: nothing is reached from it", name)
		}
		reached[f], next = true, append(next, f)
	}
	for len(next) > 0 {
		f := next[len(next)-1]
		next = next[:len(next)-1]
		for h := range g.calls[f] {
			if !reached[h] {
				reached[h], next = true, append(next, h)
			}
		}
	}
	return reached, nil
}

// unreached says of f, which ran but was not reached, why it may have run:
// taken as a value and called through it; called by functions not reached;
// a function literal written in it ran, which it returned or stored and
// which was called through a value (seqnode.FirstN's predicate); or called
// from outside the module, as go-zookeeper's loops call the root's
// connection wrapper on the session's goroutines.
func (g *graph) unreached(f function) string {
	var why []string
	if v := g.values[f]; len(v) > 0 {
		why = append(why, "taken as a value at "+strings.Join(v, ", "))
	}
	var by []string
	for c, to := range g.calls {
		if to[f] {
			by = append(by, cmp.Or(c.pkg, "(root)")+"/"+c.name)
		}
	}
	if len(by) > 0 {
		slices.Sort(by)
		why = append(why, "called by "+strings.Join(by, ", "))
	}
	switch {
	case len(why) > 0:
	case g.literals[f]:
		why = append(why, "no caller ran; a function literal written in it ran, called through a value")
	default:
		why = append(why, "no caller in the module: called from outside it (the session's goroutines)")
	}
	return strings.Join(why, "; ")
}

// indirectOf returns the calls of function values that the functions of fs
// make, sorted.
func (g *graph) indirectOf(fs map[function]bool) []string {
	var calls []string
	for f := range fs {
		for _, c := range g.indirect[f] {
			calls = append(calls, c+" (in "+f.name+")")
		}
	}
	slices.SortFunc(calls, func(a, b string) int { return strings.Compare(sortable(a), sortable(b)) })
	return slices.Compact(calls)
}

// sortable pads the line of "file:line: ..." so that lines sort as numbers.
func sortable(s string) string {
	file, rest, _ := strings.Cut(s, ":")
	line, rest, _ := strings.Cut(rest, ":")
	return fmt.Sprintf("%s:%08s:%s", file, line, rest)
}

// qualified names the function fd of package pkg as graph.named does:
// package, receiver type if a method, and name.
func qualified(pkg string, fd *ast.FuncDecl) string {
	name := fd.Name.Name
	if fd.Recv != nil && len(fd.Recv.List) == 1 {
		t := fd.Recv.List[0].Type
		if star, ok := t.(*ast.StarExpr); ok {
			t = star.X
		}
		switch x := t.(type) { // a generic receiver: T[X] or T[X, Y]
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		}
		if id, ok := t.(*ast.Ident); ok {
			name = id.Name + "." + name
		}
	}
	return pkg + "." + name
}

// at is the position p of a file of package pkg: "pkg/file:line".
func at(pkg string, fset *token.FileSet, p token.Pos) string {
	pos := fset.Position(p)
	return path.Join(pkg, filepath.Base(pos.Filename)) + ":" + strconv.Itoa(pos.Line)
}
