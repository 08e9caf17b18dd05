// Package chaos is zkrecipes' own Jepsen-style fault suite: worker processes
// run critical sections on the lock recipes, every process (workers and the
// harness that injects faults) appends what it does to one timeline, and
// Check proves from that timeline alone that the recipes kept their promises.
//
// The timeline is a file of JSON lines, one event per line, appended with a
// single write(2) on a descriptor opened with O_APPEND. On Linux such a write
// to a regular file is atomic with respect to other appenders, so lines never
// interleave and the order of the lines is the order of the writes: the
// append order, which Check uses as the happens-before order between
// processes. Each event also carries its wall-clock time in nanoseconds (all
// processes run on one machine, so the clocks agree), used for margins and
// for the begin time of a write.
//
// The package itself is the timeline and its checker, which use no recipe.
// The workers (worker_test.go, section_test.go, election_test.go) and the
// harness are test code: they drive the recipes through their public API,
// as a user would.
//
// docs/faults.md describes the scenarios and the rules.
package chaos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// Event types written by workers.
const (
	EvStart   = "start"   // the worker process is up
	EvEnd     = "end"     // the worker process exits cleanly
	EvStuck   = "stuck"   // the worker gave up waiting for its own loops
	EvSession = "session" // a session was opened: Note is its id, Timeout the one the server granted
	EvWait    = "wait"    // a loop starts to wait for its lock
	EvEnter   = "enter"   // right after acquiring: Hold, Recipe, Paths, Tokens
	EvExit    = "exit"    // right before releasing
	EvLoss    = "loss"    // the held context ended with locks.ErrLockLost
	EvWrite   = "write"   // a guarded write's outcome: Paths[0], Token, OK, Version, Begin
)

// Event types of the store (see Store), written by workers when an
// operation returns: Op (the operation's id in its process), Paths[0] (the
// key), Token, OK, Begin (when it was sent); for a read Fence and the Value
// read; for a write the Value written, its Basis and Excl.
const (
	EvStoreRead  = "store-read"
	EvStoreWrite = "store-write"
)

// Event types written by the harness about its own fault actions. Target is
// the worker's pid or the server's index.
const (
	EvSpawn     = "spawn"        // a worker was started
	EvKill      = "kill"         // kill -9 of a worker
	EvStop      = "stop"         // SIGSTOP of a worker
	EvCont      = "cont"         // SIGCONT of a worker
	EvPartition = "partition"    // a network fault starts; Note says which
	EvHeal      = "heal"         // the network fault ends
	EvSrvKill   = "server-kill"  // kill -9 of a ZooKeeper server; Note: its role
	EvSrvStart  = "server-start" // the server was started again
	EvHung      = "hung"         // a worker did not exit in time and was killed
)

// EvTorn is not written by anyone: ParseTimeline makes it of the start of
// a line that a process killed with SIGKILL left unfinished, which the
// next appender's line follows (Pid: the one the fragment names, Note:
// the fragment). A write(2) to a regular file is atomic with respect to
// other appenders, but a SIGKILL can end one that spans two pages of the
// file between them. Check requires the fragment's process to be killed
// after it.
const EvTorn = "torn"

// NoteMissedStop is the Note of the SIGCONT that the harness sends at once
// after a SIGSTOP that missed its target (the worker let go of the lock
// just before it): that stop froze nothing, and the checker ignores both.
const NoteMissedStop = "released before the stop"

// missedStopBound is the longest a stop that missed its target may last:
// far less than any session's loss deadline, so that the stop could not
// have cost the worker its session.
const missedStopBound = 500 * time.Millisecond

// withoutMissedStops returns events without the stops that the harness
// undid at once, having missed their target, and their SIGCONTs
// (NoteMissedStop). Such a stop froze nothing: a worker stopped so while it
// waited did not acquire on resumption for a session that expired during
// the stop, it hit no term, and it is no fault, so the checks of stops,
// takeovers and margins see neither. One that lasted missedStopBound or
// more is a timeline error: it may have cost the worker its session.
func withoutMissedStops(r *Report, events []Event) []Event {
	missed := map[int]bool{} // by seq: a missed stop, or its SIGCONT
	last := map[int]*Event{} // by pid: its last stop
	for i, ev := range events {
		switch {
		case ev.Type == EvStop:
			last[ev.Target] = &events[i]
		case ev.Type == EvCont && ev.Note == NoteMissedStop:
			st := last[ev.Target]
			if st == nil {
				r.add(RuleTimeline, ev.Seq, "a SIGCONT of %d for a missed stop, with no stop before it", ev.Target)
				continue
			}
			if d := time.Duration(ev.Time - st.Time); d >= missedStopBound {
				r.add(RuleTimeline, ev.Seq, "a stop of %d that missed lasted %v (at most %v)", ev.Target, d, missedStopBound)
			}
			missed[st.Seq], missed[ev.Seq] = true, true
		}
	}
	if len(missed) == 0 {
		return events
	}
	return slices.DeleteFunc(slices.Clone(events), func(ev Event) bool { return missed[ev.Seq] })
}

// Recipes, as they appear in enter events. Each names its exclusion rule.
const (
	RecipeMutex = "mutex" // exclusive on its path
	RecipeWrite = "write" // an RWMutex writer: exclusive on the path
	RecipeRead  = "read"  // an RWMutex reader: shared with readers only
	RecipeLease = "lease" // a semaphore lease: at most Limit at once
	RecipeMulti = "multi" // a multi-lock: exclusive on each member path
	RecipeLatch = "latch" // a term of an election.Latch: exclusive on the election's path
)

// Event is one line of a timeline.
type Event struct {
	Seq  int    `json:"-"`   // 1-based line number: the append order
	Time int64  `json:"t"`   // wall clock, Unix nanoseconds
	Pid  int    `json:"pid"` // the process that wrote the line
	Type string `json:"ev"`

	Hold    string        `json:"hold,omitempty"`    // "<pid>.<n>": one acquisition
	Recipe  string        `json:"recipe,omitempty"`  // enter, wait: one of the Recipe constants
	Paths   []string      `json:"paths,omitempty"`   // enter: lock paths; write: the one path written for
	Tokens  []int64       `json:"tokens,omitempty"`  // enter: fencing token per path
	Limit   int           `json:"limit,omitempty"`   // enter of a lease: the semaphore's maximum
	Token   int64         `json:"token,omitempty"`   // write: the token written
	OK      bool          `json:"ok,omitempty"`      // write: the server accepted it
	Version int32         `json:"version,omitempty"` // accepted write: the resource's version after it
	Begin   int64         `json:"begin,omitempty"`   // write: when it was sent
	Op      int64         `json:"op,omitempty"`      // store events: the operation's id in its process
	Value   string        `json:"value,omitempty"`   // store events: the value read or written
	Basis   string        `json:"basis,omitempty"`   // store write: the value the section last saw
	Fence   bool          `json:"fence,omitempty"`   // store read: it raises the key's token
	Excl    bool          `json:"excl,omitempty"`    // store write: by an exclusive holder, whose Basis must be current
	Target  int           `json:"target,omitempty"`  // harness events: pid or server index
	Timeout time.Duration `json:"timeout,omitempty"` // session: the session timeout the server granted
	Note    string        `json:"note,omitempty"`    // a cause, an error, a fault's kind
}

// At returns the event's wall-clock time.
func (e Event) At() time.Time { return time.Unix(0, e.Time) }

// String is a short human-readable form for reports.
func (e Event) String() string {
	s := fmt.Sprintf("#%d %s pid=%d", e.Seq, e.Type, e.Pid)
	if e.Hold != "" {
		s += " hold=" + e.Hold
	}
	if e.Recipe != "" {
		s += " " + e.Recipe
	}
	if len(e.Paths) > 0 {
		s += fmt.Sprint(" ", e.Paths)
	}
	if e.Target != 0 {
		s += fmt.Sprint(" target=", e.Target)
	}
	if e.Note != "" {
		s += " (" + e.Note + ")"
	}
	return s
}

// Log appends events to a timeline file. It is safe for concurrent use: each
// event is one Write on an O_APPEND descriptor.
type Log struct {
	f   *os.File
	pid int
}

// OpenLog opens (creating if needed) the timeline at path for appending.
func OpenLog(path string) (*Log, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("chaos: open timeline: %w", err)
	}
	return &Log{f: f, pid: os.Getpid()}, nil
}

// Append stamps ev with this process's pid and, if it has none, the current
// time, and appends it as one line.
func (l *Log) Append(ev Event) error {
	ev.Pid = l.pid
	if ev.Time == 0 {
		ev.Time = time.Now().UnixNano()
	}
	line, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("chaos: encode event: %w", err)
	}
	line = append(line, '\n')
	n, err := l.f.Write(line)
	if err == nil && n != len(line) {
		err = fmt.Errorf("short write (%d of %d bytes)", n, len(line))
	}
	if err != nil {
		return fmt.Errorf("chaos: append to timeline: %w", err)
	}
	return nil
}

// Close closes the file.
func (l *Log) Close() error { return l.f.Close() }

func parseEvent(line []byte) (Event, bool) {
	var ev Event
	err := json.Unmarshal(line, &ev)
	return ev, err == nil && ev.Type != ""
}

// tornPid finds the pid in the start of a torn line.
var tornPid = regexp.MustCompile(`^\{"t":\d+,"pid":(\d+)`)

// ReadTimeline returns the events of the timeline at path, in append order.
func ReadTimeline(path string) ([]Event, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	events, _, err := ParseTimeline(data, 0)
	return events, err
}

// ParseTimeline parses the complete lines of data, numbering them from
// first+1. It returns the events and the number of bytes consumed; a final
// line without its newline is left for a later call (a reader may see a
// write in progress). A line that is not an event is an error.
func ParseTimeline(data []byte, first int) ([]Event, int, error) {
	var out []Event
	used := 0
	for {
		i := bytes.IndexByte(data[used:], '\n')
		if i < 0 {
			return out, used, nil
		}
		line := data[used : used+i]
		ev, ok := parseEvent(line)
		if !ok {
			// A torn line, followed by a whole one?
			j := bytes.LastIndex(line, []byte(`{"t":`))
			if ev, ok = parseEvent(line[max(j, 0):]); j <= 0 || !ok {
				return out, used, fmt.Errorf("chaos: timeline line %d: bad event %q", first+len(out)+1, line)
			}
			torn := Event{Seq: first + len(out) + 1, Type: EvTorn, Note: string(line[:j])}
			if m := tornPid.FindSubmatch(line[:j]); m != nil {
				torn.Pid, _ = strconv.Atoi(string(m[1]))
			}
			out = append(out, torn)
		}
		ev.Seq = first + len(out) + 1
		out = append(out, ev)
		used += i + 1
	}
}
