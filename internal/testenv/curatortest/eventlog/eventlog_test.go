package eventlog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// parse builds events from "+ M a" lines separated by newlines or ';'.
func parse(t *testing.T, log string) []Event {
	t.Helper()
	var b strings.Builder
	for l := range strings.SplitSeq(log, ";") {
		if l = strings.TrimSpace(l); l != "" {
			b.WriteString(l + "\n")
		}
	}
	events, err := Parse([]byte(b.String()))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return events
}

func TestAppendRead(t *testing.T) {
	file := filepath.Join(t.TempDir(), "log")
	for _, e := range [][3]string{{Enter, KindMutex, "go-1-1"}, {Leave, KindMutex, "go-1-1"}, {Enter, KindRead, "java-2-1"}} {
		if err := Append(file, e[0], e[1], e[2]); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if want := "+ M go-1-1\n- M go-1-1\n+ R java-2-1\n"; string(data) != want {
		t.Fatalf("file = %q, want %q", data, want)
	}
	events, err := Read(file)
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{{1, "+", "M", "go-1-1"}, {2, "-", "M", "go-1-1"}, {3, "+", "R", "java-2-1"}}
	if fmt.Sprint(events) != fmt.Sprint(want) {
		t.Fatalf("Read = %v, want %v", events, want)
	}
}

func TestAppendRejects(t *testing.T) {
	file := filepath.Join(t.TempDir(), "log")
	for _, e := range [][3]string{
		{"*", "M", "a"}, {"", "M", "a"}, {"+", "", "a"}, {"+", "M M", "a"},
		{"+", "M", ""}, {"+", "M", "a b"}, {"+", "M", "a\n"}, {"+", "M\t", "a"},
	} {
		if err := Append(file, e[0], e[1], e[2]); err == nil {
			t.Errorf("Append(%q, %q, %q) succeeded", e[0], e[1], e[2])
		}
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("rejected events created the file: %v", err)
	}
}

func TestReadErrors(t *testing.T) {
	if _, err := Read(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("Read of a missing file succeeded")
	}
	for _, tc := range []struct{ data, line string }{
		{"+ M a\n- M a", "line 2"},
		{"+ M a\n\n", "line 2"},
		{"+ M a b\n", "line 1"},
		{"x M a\n", "line 1"},
		{"+ M a\n+  M b\n", "line 2"},
		{"+ M\n", "line 1"},
	} {
		events, err := Parse([]byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.line) {
			t.Errorf("Parse(%q) = %v, %v; want an error at %s", tc.data, events, err, tc.line)
		}
	}
	if events, err := Parse(nil); err != nil || len(events) != 0 {
		t.Errorf("Parse(nil) = %v, %v", events, err)
	}
}

// TestConcurrentAppend checks that lines written at once by many writers
// come out whole.
func TestConcurrentAppend(t *testing.T) {
	file := filepath.Join(t.TempDir(), "log")
	const writers, each = 8, 200
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			// A long client id makes torn lines easy to spot.
			id := fmt.Sprintf("go-%d-%s", w, strings.Repeat("x", 100))
			for range each {
				for _, op := range []string{Enter, Leave} {
					if err := Append(file, op, KindLease, id); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	events, err := Read(file)
	if err != nil {
		t.Fatal(err)
	}
	stats, err := Check(events, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := stats[KindLease]; s.Entries != writers*each || s.Active != 0 || s.MaxActive < 1 || s.MaxActive > writers {
		t.Fatalf("stats = %+v", s)
	}
}

func TestCheckOK(t *testing.T) {
	events := parse(t, `+ M a; - M a; + M b; - M b; + M a; - M a;
		+ R a; + R b; + R c; - R b; - R a; - R c; + W d; - W d; + R e`)
	stats, err := Check(events, map[string]int{KindMutex: 1, KindWrite: 1}, KindWrite)
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{
		KindMutex: {Entries: 3, MaxActive: 1},
		KindRead:  {Entries: 4, MaxActive: 3, Active: 1},
		KindWrite: {Entries: 1, MaxActive: 1},
	}
	if fmt.Sprint(stats) != fmt.Sprint(want) {
		t.Fatalf("stats = %v, want %v", stats, want)
	}
}

func TestCheckSemaphore(t *testing.T) {
	events := parse(t, "+ L a; + L b; - L a; + L c; + L a; - L a; - L b; - L c")
	if _, err := Check(events, map[string]int{KindLease: 2}); err == nil {
		t.Fatal("three leases under max 2 passed")
	} else if v := (*Violation)(nil); !errors.As(err, &v) || v.Event.Line != 5 || !errors.Is(err, ErrViolation) {
		t.Fatalf("err = %v, want a violation at line 5", err)
	}
	stats, err := Check(events, map[string]int{KindLease: 3})
	if err != nil || stats[KindLease].MaxActive != 3 || stats[KindLease].Entries != 4 {
		t.Fatalf("Check = %v, %v", stats, err)
	}
}

func TestCheckViolations(t *testing.T) {
	rw := map[string]int{KindWrite: 1}
	for _, tc := range []struct {
		name      string
		log       string
		limits    map[string]int
		exclusive []string
		line      int
		reason    string
	}{
		{"two mutex holders", "+ M a; - M a; + M b; + M c", map[string]int{KindMutex: 1}, nil, 4, "at most 1"},
		{"writer after reader", "+ R a; + W b", rw, []string{KindWrite}, 2, "exclusive"},
		{"reader after writer", "+ W b; + R a", rw, []string{KindWrite}, 2, "exclusive"},
		{"two writers", "+ W a; + W b", rw, []string{KindWrite}, 2, "at most 1"},
		{"leave without enter", "+ M a; - M b", nil, nil, 2, "without having entered"},
		{"leave other kind", "+ R a; - W a", nil, nil, 2, "without having entered"},
		{"leave twice", "+ M a; - M a; - M a", nil, nil, 3, "without having entered"},
		{"enter twice", "+ B a; + B b; + B a", nil, nil, 3, "again"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Check(parse(t, tc.log), tc.limits, tc.exclusive...)
			var v *Violation
			if !errors.As(err, &v) {
				t.Fatalf("Check = %v, want a *Violation", err)
			}
			if v.Event.Line != tc.line || !strings.Contains(err.Error(), tc.reason) ||
				!strings.Contains(err.Error(), fmt.Sprintf("line %d ", tc.line)) {
				t.Fatalf("Check = %v, want line %d and %q", err, tc.line, tc.reason)
			}
		})
	}
}

func TestCheckUnnumbered(t *testing.T) {
	events := []Event{{Op: Enter, Kind: KindMutex, Client: "a"}, {Op: "?", Kind: KindMutex, Client: "a"}}
	_, err := Check(events, nil)
	var v *Violation
	if !errors.As(err, &v) || v.Event.Line != 2 || !strings.Contains(v.Reason, "unknown op") {
		t.Fatalf("Check = %v", err)
	}
}

func TestGoClient(t *testing.T) {
	if got, want := GoClient(3), fmt.Sprintf("go-%d-3", os.Getpid()); got != want {
		t.Fatalf("GoClient(3) = %q, want %q", got, want)
	}
}
