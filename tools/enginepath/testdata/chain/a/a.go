// Package a holds a case of TestChain in each function: what its comment
// says it is, a caller in the chain or a helper.
package a

import (
	"context"
	"strings"
	"sync"

	"github.com/zkrecipes/recipes"
	bee "github.com/zkrecipes/recipes/b"
)

type T struct{ f func() }

func Caller()                         { bee.Leaf() }                     // chain: pkg.F
func Local()                          { helper() }                       // chain: f
func helper()                         {}                                 // helper
func (t *T) M()                       { t.other() }                      // chain: a method
func (t *T) other()                   {}                                 // helper
func Closure(s *recipes.Session)      { s.Retry(func() { bee.Leaf() }) } // chain: the literal is Closure's
func Root(s *recipes.Session)         { s.Retry(nil); recipes.Leaf() }   // helper: the root does not count
func Passed(s *recipes.Session, t *T) { s.Retry(t.other) }               // helper: t.other is passed, not called
func Std()                            { strings.Cut("", "") }            // helper: strings is not b
func Recurse()                        { Recurse() }                      // helper: itself
func Builtin(m map[int]int)           { delete(m, 1) }                   // helper: the builtin
func (t *T) delete()                  {}                                 // helper
func NotRan()                         { helper() }                       // did not run
func CallsNotRan()                    { NotRan() }                       // helper: NotRan did not run
func Generic()                        { (gen[int])() }                   // chain
func gen[X any]()                     {}                                 // helper
func GenericType()                    { G[int]{}.Get() }                 // chain: G.Get
func Field(t T)                       { t.f() }                          // helper: a field of func type
func Named(s struct{ Leaf func() })   { s.Leaf() }                       // helper: a field, not b.Leaf

type G[X any] struct{}

func (G[X]) Get() {} // helper

// Mutex and State have methods named as those of sync.Mutex and
// context.Context, which name matching took the one for the other.
type Mutex struct{}

func (*Mutex) Lock()   {} // helper
func (*Mutex) Unlock() {} // helper

type State struct{}

func (State) Value(any) any { return nil } // helper

type valuer interface{ Value(any) any }

func Sync(mu *sync.Mutex)     { mu.Lock() }      // helper: sync.Mutex is not Mutex
func Ctx(ctx context.Context) { ctx.Value(nil) } // helper: no State is a context.Context
func Locker(l sync.Locker)    { l.Lock() }       // chain: *Mutex is a sync.Locker
func Valuer(v valuer)         { v.Value(nil) }   // chain: State is a valuer

// Outer is a getter by the method it has of inner, which it embeds.
type inner struct{}

func (*inner) get() int { return 0 } // helper

type Outer struct{ *inner }

func (Outer) Name() string { return "" } // helper

type getter interface {
	get() int
	Name() string
}

func Promoted(g getter) int { return g.get() } // chain: Outer is a getter with inner's get
