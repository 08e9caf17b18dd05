package znode

import "sync"

// A State is what the recipe packages keep for one session, and lose with
// it: a lock's local queue (seqnode), a semaphore's standing layout check
// (locks). Each package keeps its own value under a key of its own type.
type State struct {
	mu     sync.Mutex
	values map[any]any
}

// Value returns the value kept under key, made by init the first time.
func (s *State) Value(key any, init func() any) any {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.values[key]
	if !ok {
		if s.values == nil {
			s.values = map[any]any{}
		}
		v = init()
		s.values[key] = v
	}
	return v
}
