package recipes

import "github.com/zkrecipes/recipes/internal/background"

func init() {
	background.Run = func(s any, f func()) bool { return s.(*Session).background(f) }
}

// background runs f on a goroutine that Close waits for, unless the session
// has already ended.
func (s *Session) background(f func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return false
	}
	s.wg.Go(func() {
		f()
	})
	return true
}
