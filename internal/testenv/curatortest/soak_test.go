package curatortest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/tests/chaos"
)

// TestSoakMutex runs mode soak-mutex without faults: three threads on two
// paths, a followed node that changes now and then, until the timeline
// shows soakEnters sections. Curator's mutex then excludes, so every
// section reads what the one before it on its path wrote.
func TestSoakMutex(t *testing.T) {
	const soakEnters = 30
	e := newModeEnv(t)
	store, err := chaos.NewStore(true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := store.Close(); err != nil {
			t.Error(err)
		}
	})
	paths := []string{e.root + "/a", e.root + "/b"}
	watch := e.root + "/config"
	if _, err := e.admin.CreateContainer(e.root, nil, zk.FlagContainer, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.admin.Create(watch, []byte("0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	timeline := filepath.Join(t.TempDir(), "timeline.jsonl")

	start := time.Now()
	cmd := e.peer.Command(e.ctx, "soak-mutex", e.servers, strings.Join(paths, ","), store.Addr(), timeline,
		"3", "5", "0", watch)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := false
	t.Cleanup(func() { // if the test failed before its own Wait
		if !waited {
			_ = stdin.Close()
			_ = cmd.Wait()
		}
	})
	enters, sets := 0, 0
	for deadline := time.Now().Add(waitLong / 2); enters < soakEnters; {
		if time.Now().After(deadline) {
			waited = true
			_ = stdin.Close()
			err := cmd.Wait()
			t.Fatalf("%d enters after %v (%v)\n%s", enters, waitLong/2, err, tail(stderr.Bytes(), 30))
		}
		time.Sleep(20 * time.Millisecond)
		if sets < 5 {
			sets++
			if _, err := e.admin.Set(watch, fmt.Appendf(nil, "%d", sets), -1); err != nil {
				t.Fatal(err)
			}
		}
		data, err := os.ReadFile(timeline)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		events, _, err := chaos.ParseTimeline(data, 0)
		if err != nil {
			t.Fatal(err)
		}
		enters = count(events, chaos.EvEnter)
	}
	if err := stdin.Close(); err != nil {
		t.Fatal(err)
	}
	waited = true
	if err := cmd.Wait(); err != nil {
		t.Fatalf("soak-mutex: %v\n%s", err, tail(stderr.Bytes(), 30))
	}
	t.Logf("soak-mutex: %d enters seen, exited %v after its start", enters, time.Since(start))
	if err := e.admin.Delete(watch, -1); err != nil {
		t.Fatal(err)
	}

	events, err := chaos.ReadTimeline(timeline)
	if err != nil {
		t.Fatal(err)
	}
	checkSoakTimeline(t, events)
}

// checkSoakTimeline fails t unless events are those of one soak-mutex
// process run without faults.
func checkSoakTimeline(t *testing.T, events []chaos.Event) {
	t.Helper()
	for _, ev := range []string{chaos.EvStart, chaos.EvSession, chaos.EvEnd} {
		if count(events, ev) == 0 {
			t.Errorf("no %s event", ev)
		}
	}
	if first := events[0]; first.Type != chaos.EvStart {
		t.Errorf("first event %v, want start", first)
	}
	if last := events[len(events)-1]; last.Type != chaos.EvEnd || last.Note != fmt.Sprintf("%d sections", count(events, chaos.EvEnter)) {
		t.Errorf("last event %v, want end with %d sections", last, count(events, chaos.EvEnter))
	}

	pathOf := map[string]string{}  // by hold: its path, from enter to exit
	holder := map[string]string{}  // by path: the hold inside, if any
	value := map[string]string{}   // by key: the store's value, from the writes
	steps := map[string][]string{} // by hold: its events after enter
	for _, ev := range events {
		switch ev.Type {
		case chaos.EvSession:
			if !strings.HasPrefix(ev.Note, "0x") || ev.Timeout <= 0 {
				t.Errorf("%v: timeout %v, want a session id and a timeout", ev, ev.Timeout)
			}
		case chaos.EvEnter:
			if ev.Recipe != "curator" || len(ev.Paths) != 1 || len(ev.Tokens) != 1 || ev.Tokens[0] != 0 {
				t.Errorf("%v: tokens %v, want recipe curator, one path, token 0", ev, ev.Tokens)
				continue
			}
			p := ev.Paths[0]
			if h := holder[p]; h != "" {
				t.Errorf("%v: %s entered while %s held it", ev, p, h)
			}
			holder[p], pathOf[ev.Hold] = ev.Hold, p
		case chaos.EvStoreRead, chaos.EvStoreWrite:
			p := pathOf[ev.Hold]
			steps[ev.Hold] = append(steps[ev.Hold], ev.Type)
			if p == "" || len(ev.Paths) != 1 || ev.Paths[0] != p || !ev.OK || ev.Op <= 0 || ev.Begin <= 0 || ev.Begin > ev.Time {
				t.Errorf("%v: op %d, ok %v, begin %d, want an accepted operation on its hold's path", ev, ev.Op, ev.OK, ev.Begin)
				continue
			}
			last, ok := value[p]
			if !ok {
				last = chaos.InitialValue
			}
			switch {
			case ev.Type == chaos.EvStoreRead && (!ev.Fence || ev.Value != last):
				t.Errorf("%v: read %q (fence %v), want a fenced read of %q", ev, ev.Value, ev.Fence, last)
			case ev.Type == chaos.EvStoreWrite && (ev.Basis != last || !ev.Excl || ev.Value != ev.Hold+":1"):
				t.Errorf("%v: wrote %q on %q (excl %v), want %q on %q", ev, ev.Value, ev.Basis, ev.Excl, ev.Hold+":1", last)
			}
			if ev.Type == chaos.EvStoreWrite {
				value[p] = ev.Value
			}
		case chaos.EvExit, chaos.EvLoss:
			p := pathOf[ev.Hold]
			if p == "" {
				t.Errorf("%v: no enter before it", ev)
				continue
			}
			if ev.Type == chaos.EvLoss {
				t.Errorf("%v: a loss without faults", ev)
			}
			if got := strings.Join(steps[ev.Hold], ","); got != "store-read,store-write" {
				t.Errorf("%v: the section did %q, want store-read,store-write", ev, got)
			}
			delete(pathOf, ev.Hold)
			delete(holder, p)
		}
	}
	for h, p := range pathOf {
		t.Errorf("hold %s entered %s and never left", h, p)
	}
}

// count returns the number of events of type typ.
func count(events []chaos.Event, typ string) int {
	n := 0
	for _, ev := range events {
		if ev.Type == typ {
			n++
		}
	}
	return n
}
