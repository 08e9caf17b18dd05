package chaos_test

import (
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zkrecipes/recipes/tests/chaos"
)

// view is the harness's live reading of the timeline: which holds and waits
// are open, so that it can pick a holder or a waiter to hurt.
type view struct {
	path     string
	buf      []byte                 // bytes read but not yet a whole line
	consumed int                    // bytes parsed into events
	seq      int                    // the last event's sequence
	own      int                    // the sequence of the harness's last event
	holds    map[string]chaos.Event // open holds by id: their enter
	waits    map[string]chaos.Event // open waits by id
	dead     map[int]bool           // pids the harness killed
	count    int                    // enters so far
	entered  map[string]int         // enters so far by recipe
	after    []chaos.Event          // every enter and loss, for "since" queries
	ended    map[string]int         // by hold id: the sequence of its first exit or loss
	sessions map[int]int64          // by pid: the id of its latest session
}

func newView(path string) *view {
	return &view{path: path, holds: map[string]chaos.Event{}, waits: map[string]chaos.Event{}, dead: map[int]bool{},
		entered: map[string]int{}, ended: map[string]int{}, sessions: map[int]int64{}}
}

// refresh reads what was appended since the last call.
func (v *view) refresh() error {
	f, err := os.Open(v.path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(int64(v.offset()), io.SeekStart); err != nil {
		return err
	}
	more, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	v.buf = append(v.buf, more...)
	events, used, err := chaos.ParseTimeline(v.buf, v.seq)
	if err != nil {
		return err
	}
	v.consumed += used
	v.buf = v.buf[used:]
	for _, ev := range events {
		v.seq = ev.Seq
		v.apply(ev)
	}
	return nil
}

func (v *view) offset() int { return v.consumed + len(v.buf) }

func (v *view) apply(ev chaos.Event) {
	if ev.Pid == os.Getpid() {
		v.own = ev.Seq
	}
	switch ev.Type {
	case chaos.EvWait:
		v.waits[ev.Hold] = ev
	case chaos.EvEnter:
		delete(v.waits, ev.Hold)
		v.holds[ev.Hold] = ev
		v.count++
		v.entered[ev.Recipe]++
		v.after = append(v.after, ev)
	case chaos.EvExit:
		delete(v.holds, ev.Hold)
		v.end(ev)
	case chaos.EvLoss:
		delete(v.holds, ev.Hold)
		v.after = append(v.after, ev)
		v.end(ev)
	case chaos.EvEnd:
		v.forget(ev.Pid)
	case chaos.EvSession:
		// The worker writes the id as 0x%x.
		if id, err := strconv.ParseInt(strings.TrimPrefix(ev.Note, "0x"), 16, 64); err == nil {
			v.sessions[ev.Pid] = id
		}
	}
}

func (v *view) end(ev chaos.Event) {
	if v.ended[ev.Hold] == 0 {
		v.ended[ev.Hold] = ev.Seq
	}
}

// heldAt reports whether pid held path with recipe at sequence seq: it had
// entered before seq and had not logged an exit or loss before it. For a
// fault the harness logged at seq, that says whether the fault caught pid
// holding, whatever pid did after it.
func (v *view) heldAt(seq, pid int, recipe, path string) bool {
	for _, ev := range v.after {
		if ev.Seq < seq && ev.Pid == pid && ev.Type == chaos.EvEnter && ev.Recipe == recipe && slices.Contains(ev.Paths, path) {
			if e := v.ended[ev.Hold]; e == 0 || e > seq {
				return true
			}
		}
	}
	return false
}

// forget drops the holds and waits of a process that is gone.
func (v *view) forget(pid int) {
	v.dead[pid] = true
	for id, ev := range v.holds {
		if ev.Pid == pid {
			delete(v.holds, id)
		}
	}
	for id, ev := range v.waits {
		if ev.Pid == pid {
			delete(v.waits, id)
		}
	}
}

// holder returns the pid of a live process holding path with recipe, or 0.
func (v *view) holder(recipe, path string) int {
	for _, ev := range v.holds {
		if ev.Recipe == recipe && slices.Contains(ev.Paths, path) && !v.dead[ev.Pid] {
			return ev.Pid
		}
	}
	return 0
}

// waiter returns the pid of a live process waiting for path with recipe
// and holding nothing on it, or 0.
func (v *view) waiter(recipe, path string) int {
	for _, ev := range v.waits {
		if ev.Recipe == recipe && slices.Contains(ev.Paths, path) && !v.dead[ev.Pid] && v.holder(recipe, path) != ev.Pid {
			return ev.Pid
		}
	}
	return 0
}

// since returns the first event of type typ at or after sequence seq that
// matches, and whether there is one.
func (v *view) since(seq int, typ string, match func(chaos.Event) bool) (chaos.Event, bool) {
	for _, ev := range v.after {
		if ev.Seq >= seq && ev.Type == typ && match(ev) {
			return ev, true
		}
	}
	return chaos.Event{}, false
}

// poll is how often the harness re-reads the timeline while waiting for a
// state to appear in it.
const poll = 10 * time.Millisecond
