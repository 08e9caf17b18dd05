// Package recipes is the root of the module TestChain reads: its functions
// are in no chain.
package recipes

type Session struct{}

func (s *Session) Retry(f func()) { f() }
func Leaf()                       {}
func Calls()                      { Leaf() } // no chain: the root
