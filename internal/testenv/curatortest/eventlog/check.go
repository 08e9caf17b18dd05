package eventlog

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// KindStats summarises one kind of event in a log.
type KindStats struct {
	Entries   int // Enter events
	MaxActive int // most clients active at once
	Active    int // clients still active at the end of the log
}

// Stats maps each kind seen in a log to its summary.
type Stats map[string]KindStats

// Check replays events, keeping the set of active clients of each kind, and
// returns a *Violation (wrapping ErrViolation) for the first event that
//
//   - makes more clients of a kind active than limits[kind] allows (a kind
//     missing from max is unlimited),
//   - makes a kind listed in exclusive active together with any other kind,
//     or another kind active together with it (even within one client, so
//     a write-to-read downgrade shows up as a violation),
//   - is a Leave by a client that is not active in that kind, or an Enter by
//     a client that already is.
//
// A read/write lock is checked with Check(events, map[string]int{KindWrite: 1},
// KindWrite): writers exclude readers and each other. Clients still active at
// the end are not a violation (a process may have been killed); they are
// counted in KindStats.Active. The Stats returned with a violation cover the
// events before it.
func Check(events []Event, limits map[string]int, exclusive ...string) (Stats, error) {
	stats := Stats{}
	active := map[string]map[string]bool{} // kind -> active clients
	total := 0                             // active clients over all kinds
	for i, e := range events {
		if e.Line == 0 {
			e.Line = i + 1
		}
		set := active[e.Kind]
		if set == nil {
			set = map[string]bool{}
			active[e.Kind] = set
		}
		switch e.Op {
		case Enter:
			if set[e.Client] {
				return stats, violation(e, "client entered %s again without leaving", e.Kind)
			}
			set[e.Client] = true
			total++
		case Leave:
			if !set[e.Client] {
				return stats, violation(e, "client left %s without having entered it", e.Kind)
			}
			delete(set, e.Client)
			total--
			s := stats[e.Kind]
			s.Active = len(set)
			stats[e.Kind] = s
			continue
		default:
			return stats, violation(e, "unknown op %q", e.Op)
		}
		if limit, ok := limits[e.Kind]; ok && len(set) > limit {
			return stats, violation(e, "%d clients active in %s, at most %d allowed: %s",
				len(set), e.Kind, limit, clients(set))
		}
		for _, k := range exclusive {
			if n := len(active[k]); n > 0 && total > n {
				return stats, violation(e, "%s is exclusive but active together with %s",
					k, describe(active, k))
			}
		}
		s := stats[e.Kind]
		s.Entries++
		s.Active = len(set)
		s.MaxActive = max(s.MaxActive, len(set))
		stats[e.Kind] = s
	}
	return stats, nil
}

func violation(e Event, format string, args ...any) *Violation {
	return &Violation{Event: e, Reason: fmt.Sprintf(format, args...)}
}

// clients lists a set's members in order, for messages.
func clients(set map[string]bool) string {
	return strings.Join(slices.Sorted(maps.Keys(set)), " ")
}

// describe lists the active clients of every kind but skip, for messages.
func describe(active map[string]map[string]bool, skip string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(active)) {
		if k != skip && len(active[k]) > 0 {
			parts = append(parts, fmt.Sprintf("%s [%s]", k, clients(active[k])))
		}
	}
	return strings.Join(parts, ", ")
}
