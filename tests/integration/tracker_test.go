package integration_test

import (
	"fmt"
	"sync"
	"testing"
)

// tracker records who is inside a critical section, to check exclusion
// between goroutines: at most limit[kind] of a kind at once, and a kind in
// exclusive never together with anyone else.
type tracker struct {
	limit     map[string]int
	exclusive map[string]bool

	mu         sync.Mutex // guards the fields below
	active     map[string]int
	peak       map[string]int
	entries    map[string]int
	violations []string
	full       map[string]chan struct{} // closed once limit[kind] are inside
}

func newTracker(limit map[string]int, exclusive ...string) *tracker {
	tr := &tracker{limit: limit, exclusive: map[string]bool{}, active: map[string]int{}, peak: map[string]int{}, entries: map[string]int{}, full: map[string]chan struct{}{}}
	for k := range limit {
		tr.full[k] = make(chan struct{})
	}
	for _, k := range exclusive {
		tr.exclusive[k] = true
	}
	return tr
}

func (tr *tracker) enter(kind string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for k, n := range tr.active {
		if n > 0 && (tr.exclusive[kind] || tr.exclusive[k]) {
			tr.violations = append(tr.violations, fmt.Sprintf("%s entered while %d %s inside", kind, n, k))
		}
	}
	tr.active[kind]++
	tr.entries[kind]++
	before := tr.peak[kind]
	tr.peak[kind] = max(before, tr.active[kind])
	l, ok := tr.limit[kind]
	switch {
	case ok && tr.active[kind] > l:
		tr.violations = append(tr.violations, fmt.Sprintf("%d %s inside, limit %d", tr.active[kind], kind, l))
	case ok && before < l && tr.active[kind] == l:
		close(tr.full[kind])
	}
}

// filled returns a channel closed once the limit of kind has been inside at
// once (nil, which never closes, if kind has no limit).
func (tr *tracker) filled(kind string) <-chan struct{} {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.full[kind]
}

func (tr *tracker) leave(kind string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.active[kind]--
}

// check fails t for every violation seen.
func (tr *tracker) check(t *testing.T) {
	t.Helper()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, v := range tr.violations {
		t.Error(v)
	}
}

func (tr *tracker) peakOf(kind string) int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.peak[kind]
}

func (tr *tracker) entriesOf(kind string) int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.entries[kind]
}
