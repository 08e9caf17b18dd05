// Package eventlog is a shared, append-only log of critical sections entered
// and left, written by Go and Java processes alike, and a checker that replays
// it to prove mutual exclusion across processes and languages.
//
// Each event is one line, "<op> <kind> <client>\n":
//
//   - op is Enter ("+"), written right after acquiring, or Leave ("-"),
//     written right before releasing;
//   - kind names what was held: KindMutex ("M", also semaphore mutexes and
//     multi-locks), KindRead ("R"), KindWrite ("W"), KindLease ("L", a
//     semaphore lease) or KindBarrier ("B", a double-barrier member between
//     enter and leave);
//   - client identifies the holder, such as "go-12345-3" or "java-6789-1",
//     and contains no white space.
//
// Every line is appended with a single write(2) on a file opened with
// O_APPEND, so concurrent writers on one machine never interleave within a
// line, and the order of the lines is the order in which the writes happened.
//
// The Java peer (../java/CuratorPeer.java, its LOG argument) writes the same
// lines, which is why the format lives beside it.
package eventlog

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode"
)

// Ops.
const (
	Enter = "+" // written right after acquiring
	Leave = "-" // written right before releasing
)

// Kinds.
const (
	KindMutex   = "M" // a mutex, semaphore mutex or multi-lock
	KindRead    = "R" // a read lock
	KindWrite   = "W" // a write lock
	KindLease   = "L" // a semaphore lease
	KindBarrier = "B" // a double-barrier member between enter and leave
)

// Event is one line of a log.
type Event struct {
	Line   int    // 1-based line number in the file
	Op     string // Enter or Leave
	Kind   string // KindMutex, KindRead, ... or another token
	Client string // who wrote it
}

// String formats e as the line it was read from, without the newline.
func (e Event) String() string {
	return e.Op + " " + e.Kind + " " + e.Client
}

// GoClient returns a client id for the n-th worker of this Go process,
// "go-<pid>-<n>".
func GoClient(n int) string {
	return fmt.Sprintf("go-%d-%d", os.Getpid(), n)
}

// Append appends the event "op kind client" to file, creating the file if
// needed, with a single write on a descriptor opened with O_APPEND. It
// rejects an op other than Enter or Leave, and a kind or client that is empty
// or contains white space.
func Append(file, op, kind, client string) error {
	line, err := format(op, kind, client)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("eventlog: %w", err)
	}
	n, err := f.Write(line)
	if err == nil && n != len(line) {
		err = fmt.Errorf("short write (%d of %d bytes)", n, len(line))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("eventlog: append to %s: %w", file, err)
	}
	return nil
}

func format(op, kind, client string) ([]byte, error) {
	if op != Enter && op != Leave {
		return nil, fmt.Errorf("eventlog: op %q is neither %q nor %q", op, Enter, Leave)
	}
	if !isToken(kind) {
		return nil, fmt.Errorf("eventlog: bad kind %q", kind)
	}
	if !isToken(client) {
		return nil, fmt.Errorf("eventlog: bad client %q", client)
	}
	return []byte(op + " " + kind + " " + client + "\n"), nil
}

// isToken reports whether s is non-empty and free of white space.
func isToken(s string) bool {
	return s != "" && strings.IndexFunc(s, unicode.IsSpace) < 0
}

// Read returns the events in file, in order. A line that is not exactly
// three fields with a valid op, or a last line without its newline (a torn
// write), is an error naming the line. A missing file is an error.
func Read(file string) ([]Event, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("eventlog: %w", err)
	}
	return Parse(data)
}

// Parse parses the contents of a log; see Read.
func Parse(data []byte) ([]Event, error) {
	var events []Event
	for n := 1; len(data) > 0; n++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return events, fmt.Errorf("eventlog: line %d: no newline at end of log: %q", n, data)
		}
		line := string(data[:i])
		data = data[i+1:]
		f := strings.Split(line, " ")
		if len(f) != 3 || (f[0] != Enter && f[0] != Leave) || !isToken(f[1]) || !isToken(f[2]) {
			return events, fmt.Errorf("eventlog: line %d: malformed event %q", n, line)
		}
		events = append(events, Event{Line: n, Op: f[0], Kind: f[1], Client: f[2]})
	}
	return events, nil
}

// ErrViolation is wrapped by every error Check returns; the error itself is a
// *Violation.
var ErrViolation = errors.New("eventlog: violation")

// Violation describes the first event that broke a rule.
type Violation struct {
	Event  Event  // the offending event
	Reason string // what rule it broke
}

// Error implements error.
func (v *Violation) Error() string {
	return fmt.Sprintf("eventlog: line %d %q: %s", v.Event.Line, v.Event.String(), v.Reason)
}

// Unwrap returns ErrViolation.
func (v *Violation) Unwrap() error { return ErrViolation }
