package seqnode

import "sync"

// A signal happens once: its channel closes, and the callbacks registered
// before it run, with the value it happened with. A Turn has two: its end
// (with the error it ended with) and the first revocation request.
type signal[T any] struct {
	ch chan struct{} // closed when the signal happens

	mu   sync.Mutex // guards the fields below
	done bool
	val  T
	fns  []func(T)
}

func newSignal[T any]() *signal[T] { return &signal[T]{ch: make(chan struct{})} }

// fire makes the signal happen with v and runs its callbacks, unless it has
// happened already: then it returns the value it happened with, and false.
func (s *signal[T]) fire(v T) (T, bool) {
	s.mu.Lock()
	if s.done {
		defer s.mu.Unlock()
		return s.val, false
	}
	s.done, s.val = true, v
	close(s.ch)
	fns := s.fns
	s.fns = nil
	s.mu.Unlock()
	for _, f := range fns {
		f(v)
	}
	return v, true
}

// then calls f with the signal's value when it happens, at once if it has.
func (s *signal[T]) then(f func(T)) {
	s.mu.Lock()
	done, v := s.done, s.val
	if !done {
		s.fns = append(s.fns, f)
	}
	s.mu.Unlock()
	if done {
		f(v)
	}
}

// value returns the signal's value and whether it has happened.
func (s *signal[T]) value() (T, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.val, s.done
}
