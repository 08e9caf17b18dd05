// Package locks holds where TestReach starts, Mutex.Lock and Hold.Release,
// and says of each function whether they reach it.
package locks

import (
	"github.com/zkrecipes/recipes"
	bee "github.com/zkrecipes/recipes/b"
)

type Spec struct{ Refuse func() bool }

type Mutex struct {
	s    *recipes.Session
	spec Spec
}

type Hold struct{ m *Mutex }

// Lock is reached, in the chain: it calls b.Leaf in the literal it passes
// to the root's Retry, which is Lock's, and watch in a go statement.
func (m *Mutex) Lock() *Hold {
	m.s.Retry(func() { bee.Leaf() })
	go watch()
	return &Hold{m}
}

func watch() { bee.Cut() } // reached through go watch(), in the chain

// Release is reached, a helper: it calls the root and a func field, which
// is listed as an indirect call and not followed.
func (h *Hold) Release() {
	if h.m.spec.Refuse() {
		h.m.s.Retry(nil)
	}
}

func refuse() bool { return false } // not reached: it is called through Spec.Refuse

func New(s *recipes.Session) *Mutex { return &Mutex{s, Spec{Refuse: refuse}} } // not reached
