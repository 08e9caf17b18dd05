package main

import (
	"go/parser"
	"go/token"
	"slices"
	"testing"
)

// The wiring count takes assignments at init to names of imported packages,
// and nothing else that looks like one.
func TestInitWiring(t *testing.T) {
	const src = `package p

import (
	"example.com/a/znode"
	tel "example.com/a/telemetry"
	"example.com/a/args/v2"
	"example.com/a/other"
)

type s struct{ f int }

var local s

func init() {
	znode.SentOf = nil                  // counted
	tel.Of, local.f = nil, 1            // tel counted, local not
	*args.Ptr, znode.M["k"] = nil, 1    // both counted: args is v2's name
	x := 1                              // not a selector
	_ = x
	go func() { other.X = 1 }()         // not at init
}

func init() {}

func (s) init() { znode.SentOf = nil } // a method, not an init

func setup() { znode.SentOf = nil }    // not an init
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	got := initWiring(goFile{rel: "p.go", src: []byte(src), fset: fset, ast: f})
	want := [][]string{{"p.go:15: znode.SentOf", "p.go:16: tel.Of", "p.go:17: *args.Ptr", "p.go:17: znode.M[\"k\"]"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("initWiring = %q, want %q", got, want)
	}
}
