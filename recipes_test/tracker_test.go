package recipes_test

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
}

func newTracker(limit map[string]int, exclusive ...string) *tracker {
	tr := &tracker{limit: limit, exclusive: map[string]bool{}, active: map[string]int{}, peak: map[string]int{}, entries: map[string]int{}}
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
	tr.peak[kind] = max(tr.peak[kind], tr.active[kind])
	if l, ok := tr.limit[kind]; ok && tr.active[kind] > l {
		tr.violations = append(tr.violations, fmt.Sprintf("%d %s inside, limit %d", tr.active[kind], kind, l))
	}
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
