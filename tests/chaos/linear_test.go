package chaos

import (
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// storeRun is a store and clients that log what they do, as workers do.
type storeRun struct {
	t      *testing.T
	store  *Store
	events []Event
	ops    int64
	mu     sync.Mutex
}

func newStoreRun(t *testing.T, check bool) *storeRun {
	s, err := NewStore(check)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return &storeRun{t: t, store: s}
}

// client connects as process pid.
func (r *storeRun) client(pid int) *StoreClient {
	c, err := DialStore(r.store.Addr(), pid, &r.ops, &r.mu)
	require.NoError(r.t, err)
	r.t.Cleanup(func() { _ = c.Close() })
	return c
}

func (r *storeRun) log(ev Event, err error, hold string) Event {
	require.NoError(r.t, err)
	ev.Hold = hold
	ev.Seq = len(r.events) + 1
	r.events = append(r.events, ev)
	return ev
}

func (r *storeRun) read(c *StoreClient, hold, key string, token int64, fence bool) Event {
	ev, err := c.Read(key, token, fence)
	return r.log(ev, err, hold)
}

func (r *storeRun) write(c *StoreClient, hold, key string, token int64, value, basis string) Event {
	ev, err := c.Write(key, token, value, basis, true)
	return r.log(ev, err, hold)
}

// add appends a harness or lock event to the timeline.
func (r *storeRun) add(ev Event) {
	ev.Seq = len(r.events) + 1
	r.events = append(r.events, ev)
}

// enter logs process pid's enter of hold on /k, with token if not 0.
func (r *storeRun) enter(pid int, hold string, token int64) {
	ev := Event{Type: EvEnter, Pid: pid, Hold: hold, Recipe: RecipeMutex, Paths: []string{"/k"}}
	if token != 0 {
		ev.Tokens = []int64{token}
	}
	r.add(ev)
}

// earlierFault logs a cut of process pid, and its heal, before what
// follows: a fault on an earlier acquisition of the process.
func (r *storeRun) earlierFault(pid int, note string) {
	r.add(Event{Type: EvPartition, Target: pid, Note: note})
	r.add(Event{Type: EvHeal, Target: pid})
}

// section is an exclusive section: a fenced read and a write based on it.
func (r *storeRun) section(c *StoreClient, hold, key string, token int64) {
	v := r.read(c, hold, key, token, true)
	r.write(c, hold, key, token, hold+":1", v.Value)
}

func (r *storeRun) linearize() (*Report, []Linearity) {
	rep := &Report{}
	return rep, Linearize(rep, r.events, r.store.Applied(), time.Minute)
}

// TestLinearizeLockedSections: sections one after another, and a
// superseded holder's late write that the store refused, are linearizable.
func TestLinearizeLockedSections(t *testing.T) {
	r := newStoreRun(t, true)
	a, b := r.client(1), r.client(2)
	va := r.read(a, "1.1", "/k", 5, true)
	r.section(b, "2.1", "/k", 7)
	late := r.write(a, "1.1", "/k", 5, "1.1:1", va.Value)
	assert.False(t, late.OK, "the store accepted a write under a token below the key's")
	assert.True(t, r.read(a, "1.2", "/k", 7, false).OK, "a read under the key's token")
	rep, ls := r.linearize()
	assert.Empty(t, rep.Violations)
	require.Len(t, ls, 1)
	assert.Equal(t, porcupine.Ok, ls[0].Result)
	assert.Equal(t, 5, ls[0].Ops)
}

// TestLinearizeFlagsLostUpdate: two sections without a lock (no token)
// read the same value and both write: porcupine must reject it.
func TestLinearizeFlagsLostUpdate(t *testing.T) {
	r := newStoreRun(t, true)
	a, b := r.client(1), r.client(2)
	va := r.read(a, "1.1", "/k", 0, true)
	vb := r.read(b, "2.1", "/k", 0, true)
	r.write(a, "1.1", "/k", 0, "1.1:1", va.Value)
	r.write(b, "2.1", "/k", 0, "2.1:1", vb.Value)
	rep, ls := r.linearize()
	require.Len(t, ls, 1)
	assert.Equal(t, porcupine.Illegal, ls[0].Result)
	assert.NotEmpty(t, rep.Broken(RuleLinearizable))
	path, err := ls[0].Visualize(t.TempDir())
	require.NoError(t, err)
	page, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(page), "2.1:1", "the picture shows the operations")
}

// TestLinearizeFlagsUncheckedStore: a store that accepts a superseded
// holder's late write, not checking its token, must be rejected.
func TestLinearizeFlagsUncheckedStore(t *testing.T) {
	r := newStoreRun(t, false)
	a, b := r.client(1), r.client(2)
	va := r.read(a, "1.1", "/k", 5, true)
	r.section(b, "2.1", "/k", 7)
	assert.True(t, r.write(a, "1.1", "/k", 5, "1.1:1", va.Value).OK)
	rep, ls := r.linearize()
	assert.Equal(t, porcupine.Illegal, ls[0].Result)
	assert.NotEmpty(t, rep.Broken(RuleLinearizable))
}

// TestLinearizeRecoversUnloggedOperations: an operation whose worker never
// logged the answer (killed first) is taken from the store, and a logged
// answer that the store contradicts is a timeline violation.
func TestLinearizeRecoversUnloggedOperations(t *testing.T) {
	r := newStoreRun(t, true)
	a, b := r.client(1), r.client(2)
	r.section(a, "1.1", "/k", 5)
	_, err := b.Write("/k", 7, "2.1:1", "1.1:1", true) // not logged
	require.NoError(t, err)
	v := r.read(a, "1.2", "/k", 8, true)
	assert.Equal(t, "2.1:1", v.Value)
	rep, ls := r.linearize()
	assert.Empty(t, rep.Violations)
	assert.Equal(t, porcupine.Ok, ls[0].Result)
	assert.Equal(t, 1, ls[0].Recovered)

	r.section(a, "1.3", "/k", 9)
	r.events[len(r.events)-1].OK = false
	rep, _ = r.linearize()
	assert.NotEmpty(t, rep.Broken(RuleTimeline), "the worker logged a refusal the store did not make")
}

// TestExpose: a write accepted after a later holder used the store is
// stale; one before it, or one refused, is not.
func TestExpose(t *testing.T) {
	r := newStoreRun(t, false)
	a, b := r.client(1), r.client(2)
	r.events = append(r.events, Event{Seq: 1, Type: EvEnter, Hold: "1.1", Recipe: RecipeMutex, Paths: []string{"/k"}})
	va := r.read(a, "1.1", "/k", 0, true)
	r.write(a, "1.1", "/k", 0, "1.1:1", va.Value) // before anyone else: fine
	r.events = append(r.events, Event{Seq: len(r.events) + 1, Type: EvEnter, Hold: "2.1", Recipe: RecipeMutex, Paths: []string{"/k"}})
	r.section(b, "2.1", "/k", 0)
	r.write(a, "1.1", "/k", 0, "1.1:2", "1.1:1") // stale
	r.events = append(r.events, Event{Seq: len(r.events) + 1, Type: EvExit, Hold: "2.1"})
	x := Expose(r.events)
	assert.Equal(t, map[string]int{"": 1}, x.Stale)
	assert.Equal(t, map[string]int{"": 1}, x.Overlaps, "2.1 entered while 1.1 had not ended")
	assert.Equal(t, 2, x.Sections)
}

// TestExposeNamesTheFaultThatLetTheSuccessorIn: a stale write counts
// under the last fault on its writer between its acquisition's start and
// its successor's enter, not under one after (a cut of a holder just
// resumed from a stop, that writes before it learns of its loss), nor one
// that hit an earlier acquisition of the process.
func TestExposeNamesTheFaultThatLetTheSuccessorIn(t *testing.T) {
	r := newStoreRun(t, false)
	a, b := r.client(1), r.client(2)
	r.earlierFault(1, "both-way cut")
	r.enter(1, "1.1", 0)
	va := r.read(a, "1.1", "/k", 0, true)
	r.add(Event{Type: EvStop, Target: 1})
	r.enter(2, "2.1", 0)
	r.section(b, "2.1", "/k", 0)
	r.add(Event{Type: EvCont, Target: 1})
	r.add(Event{Type: EvPartition, Target: 1, Note: "one-way cut of a holder"})
	r.write(a, "1.1", "/k", 0, "1.1:1", va.Value) // stale: the stop let 2.1 in
	x := Expose(r.events)
	assert.Equal(t, map[string]int{"sigstop": 1}, x.Stale)
	assert.Equal(t, map[string]int{"sigstop": 1}, x.Overlaps)

	r.events = slices.DeleteFunc(r.events, func(ev Event) bool { return ev.Type == EvStop })
	x = Expose(r.events)
	assert.Equal(t, map[string]int{"": 1}, x.Stale, "no fault between the two enters")
	assert.Equal(t, map[string]int{"": 1}, x.Overlaps, "the cut hit an earlier hold")
}

// TestExposeBlamesAStopWhileWaiting: a waiter stopped before its
// successor entered completes its acquisition late, on resuming, with the
// smaller token; its overlaps, with the successor and with the next
// holder, and its stale write are the stop's, although the stop came
// before its own enter.
func TestExposeBlamesAStopWhileWaiting(t *testing.T) {
	r := newStoreRun(t, false)
	a, b := r.client(1), r.client(2)
	r.earlierFault(1, "one-way cut")
	r.add(Event{Type: EvWait, Pid: 1, Hold: "1.1", Recipe: RecipeMutex, Paths: []string{"/k"}})
	r.add(Event{Type: EvStop, Target: 1})
	r.enter(2, "2.1", 8)
	r.section(b, "2.1", "/k", 0)
	r.add(Event{Type: EvCont, Target: 1})
	r.enter(1, "1.1", 7)
	r.write(a, "1.1", "/k", 0, "1.1:1", "2.1:1") // stale: 2.1, token 8, succeeds it
	r.add(Event{Type: EvExit, Pid: 2, Hold: "2.1"})
	r.enter(3, "3.1", 9)
	x := Expose(r.events)
	assert.Equal(t, map[string]int{"sigstop": 1}, x.Stale)
	assert.Equal(t, map[string]int{"sigstop": 2}, x.Overlaps, "1.1 entering beside 2.1, and 3.1 beside 1.1")
}

// TestStoreProtocol: malformed requests are answered with an error and
// change nothing.
func TestStoreProtocol(t *testing.T) {
	r := newStoreRun(t, true)
	for _, bad := range []string{"", "X 1 1 /k 1 0", "R 1 1 /k 1", "R 1 1 /k x 0", "R 1 1 /k 1 2", "W 1 1 /k 1 v b", "W x 1 /k 1 v b 0"} {
		assert.True(t, strings.HasPrefix(r.store.do(bad), "ERR "), "%q", bad)
	}
	assert.Empty(t, r.store.Applied())
	assert.Equal(t, "OK "+InitialValue, r.store.do("R 1 1 /k 3 1"))
	assert.Equal(t, "NO", r.store.do("W 1 2 /k 2 v b 1"))
	assert.Equal(t, "OK", r.store.do("W 1 3 /k 3 v b 1"))
	assert.Len(t, r.store.Applied()[1], 3)
}

// TestTornLine: a line that a killed process left unfinished, with the
// next appender's line after it, parses as a torn event and that line;
// Check accepts it only if the process was killed after it.
func TestTornLine(t *testing.T) {
	data := []byte(`{"t":1,"pid":7,"ev":"start"}` + "\n" +
		`{"t":2,"pid":7,"ev":"store-re{"t":3,"pid":9,"ev":"kill","target":7}` + "\n" +
		`{"t":4,"pid":9,"ev":"spawn","target":8}` + "\n")
	events, used, err := ParseTimeline(data, 0)
	require.NoError(t, err)
	assert.Equal(t, len(data), used)
	require.Len(t, events, 4)
	assert.Equal(t, Event{Seq: 2, Type: EvTorn, Pid: 7, Note: `{"t":2,"pid":7,"ev":"store-re`}, events[1])
	assert.Equal(t, EvKill, events[2].Type)
	assert.Equal(t, 3, events[2].Seq)
	assert.Empty(t, Check(events).Broken(RuleTimeline))

	notKilled := []byte(`{"t":2,"pid":7,"ev":"store-re{"t":4,"pid":9,"ev":"spawn","target":8}` + "\n")
	events, _, err = ParseTimeline(notKilled, 0)
	require.NoError(t, err)
	assert.NotEmpty(t, Check(events).Broken(RuleTimeline), "a torn line from a process that was not killed")

	_, _, err = ParseTimeline([]byte("garbage\n"), 0)
	assert.Error(t, err)
	_, _, err = ParseTimeline([]byte(`x{"t":2,"pid":7,"ev":"store-re`+"\n"), 0)
	assert.Error(t, err, "a torn line with nothing whole after it")
}

// TestReadersFenceTheirWriter: readers of an RWMutex, which hold together,
// do not refuse each other, but a writer they succeeded, superseded while
// it held, cannot write under their feet; a stale reader, after a later
// writer wrote, is refused.
func TestReadersFenceTheirWriter(t *testing.T) {
	r := newStoreRun(t, true)
	w, r1, r2 := r.client(1), r.client(2), r.client(3)
	r.write(w, "1.1", "/k", 3, "1.1:1", r.read(w, "1.1", "/k", 3, true).Value)
	v := r.read(w, "1.2", "/k", 5, true)
	assert.True(t, r.read(r1, "2.1", "/k", 10, true).OK)
	assert.True(t, r.read(r2, "3.1", "/k", 12, true).OK)
	assert.True(t, r.read(r1, "2.1", "/k", 10, true).OK, "a reader refused after another reader")
	assert.False(t, r.write(w, "1.2", "/k", 5, "1.2:1", v.Value).OK, "the superseded writer's write was accepted")
	r.section(w, "1.3", "/k", 14)
	assert.False(t, r.read(r1, "2.1", "/k", 10, true).OK, "a reader older than the last write was not refused")
	rep, ls := r.linearize()
	assert.Empty(t, rep.Violations)
	assert.Equal(t, porcupine.Ok, ls[0].Result)
}
