// Package recipes is the root of the module TestChain reads: its functions
// are in no chain, but TestReach reaches through them.
package recipes

import "github.com/zkrecipes/recipes/b"

type Session struct{}

func (s *Session) Retry(f func()) { b.Check(); f() } // reached from Lock: b.Check too, not f
func Leaf()                       {}
func Calls()                      { Leaf() }      // no chain: the root
func (s *Session) Connect()       { go s.loop() } // not reached: nothing reached calls it
func (s *Session) loop()          { b.Written() } // not reached: only Connect's goroutine runs it
