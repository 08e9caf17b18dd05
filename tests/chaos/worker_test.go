package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkrecipes/recipes"
)

// WorkerEnv names the environment variable that turns a test binary into a
// worker process; its value is the worker's Spec as JSON.
const WorkerEnv = "ZKRECIPES_CHAOS_WORKER"

// Spec is what a worker process does.
type Spec struct {
	Servers        []string      `json:"servers"`
	SessionTimeout time.Duration `json:"sessionTimeout"`
	Timeline       string        `json:"timeline"`
	Loops          []Loop        `json:"loops"`    // one goroutine each, sharing one session
	Hold           time.Duration `json:"hold"`     // time inside a section, between its first and last writes
	Pace           time.Duration `json:"pace"`     // time between guarded writes inside a section; 0: only its first and last
	Runtime        time.Duration `json:"runtime"`  // the worker's own bound on its run
	Sections       int           `json:"sections"` // stop after this many in all; 0: until stdin closes
	Watch          []string      `json:"watch"`    // nodes to keep one-shot data watches on
	NoLock         bool          `json:"noLock"`   // negative control: enter without the lock, write unguarded
	// Blind makes a section's last guarded writes go out even if its hold
	// has ended: the guard alone must then refuse them.
	Blind bool `json:"blind,omitempty"`
	// Store, if set, is the address of the Store that sections read and
	// write instead of writing to ZooKeeper (see storeSection); Unguarded
	// makes them do so without their token, as a lock without one does.
	Store     string `json:"store,omitempty"`
	Unguarded bool   `json:"unguarded,omitempty"`
}

// Loop is one recipe a worker takes again and again.
type Loop struct {
	Recipe string   `json:"recipe"` // RecipeMutex, LoopRW, RecipeLease, RecipeMulti or RecipeLatch
	Path   string   `json:"path"`   // the lock's or the election's path (not for RecipeMulti)
	Paths  []string `json:"paths"`  // RecipeMulti: member paths, of which a section takes two at random; others: paths of which it takes one, if set
	Max    int      `json:"max"`    // RecipeLease: the semaphore's leases
}

// LoopRW is the Loop recipe of an RWMutex: each section is a reader or a
// writer at random.
const LoopRW = "rw"

// ResourceOf returns the node that holds of lock path p write their fencing
// token to. The harness creates it before the run and deletes it after.
func ResourceOf(p string) string { return p + ".res" }

// MaybeRunWorker runs the worker and exits if WorkerEnv is set; otherwise it
// returns at once. Call it first thing in TestMain.
func MaybeRunWorker() {
	raw := os.Getenv(WorkerEnv)
	if raw == "" {
		return
	}
	var spec Spec
	err := json.Unmarshal([]byte(raw), &spec)
	if err == nil {
		err = runWorker(&spec)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos worker:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// worker is one worker process's state.
type worker struct {
	spec     *Spec
	log      *Log
	sessions *sessions
	holds    atomic.Int64 // hold ids handed out
	sections atomic.Int64 // sections entered

	storeMu  sync.Mutex // guards storeOps
	storeOps int64      // the store operations' ids
}

// runWorker runs the loops until stdin closes, the sections are done or the
// runtime bound passes. Loops that do not finish within a grace period after
// that make the worker log EvStuck and exit with status 2.
func runWorker(spec *Spec) error {
	log, err := OpenLog(spec.Timeline)
	if err != nil {
		return err
	}
	defer log.Close()
	if err := log.Append(Event{Type: EvStart}); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), spec.Runtime)
	defer cancel()
	go func() {
		// The harness closes our stdin to end the run. A blocking read of
		// a pipe cannot be interrupted, so this goroutine ends with the
		// process if the run ends otherwise.
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	w := &worker{spec: spec, log: log, sessions: &sessions{spec: spec, log: log}}
	var loops sync.WaitGroup
	for i, l := range spec.Loops {
		if l.Recipe == RecipeLatch {
			loops.Go(func() { w.elect(ctx, i, l) })
			continue
		}
		loops.Go(func() { w.loop(ctx, cancel, i, l) })
	}
	finished := make(chan struct{})
	go func() {
		loops.Wait()
		close(finished)
	}()
	<-ctx.Done()
	grace := 2*spec.SessionTimeout + 5*time.Second
	select {
	case <-finished:
	case <-time.After(grace):
		_ = log.Append(Event{Type: EvStuck, Note: fmt.Sprintf("loops still running %v after the run ended", grace)})
		os.Exit(2)
	}
	w.sessions.close()
	return log.Append(Event{Type: EvEnd, Note: fmt.Sprintf("%d sections", w.sections.Load())})
}

// sessions is the worker's one session, replaced when it ends. Loops share
// it; the first to find it dead opens the next.
type sessions struct {
	spec *Spec
	log  *Log

	mu       sync.Mutex // guards cur
	cur      *recipes.Session
	watchers sync.WaitGroup // the watch loops of every session opened
}

func (b *sessions) get(ctx context.Context) (*recipes.Session, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cur != nil && b.cur.Err() == nil {
		return b.cur, nil
	}
	if b.cur != nil {
		_ = b.cur.Close()
		b.cur = nil
	}
	s, err := recipes.Connect(ctx, b.spec.Servers, recipes.WithSessionTimeout(b.spec.SessionTimeout))
	if err != nil {
		return nil, err
	}
	b.cur = s
	if err := b.log.Append(Event{Type: EvSession, Note: fmt.Sprintf("0x%x", s.ID()), Timeout: s.Timeout()}); err != nil {
		return nil, err
	}
	for _, node := range b.spec.Watch {
		b.watchers.Go(func() { watch(ctx, s, node) })
	}
	return s, nil
}

func (b *sessions) close() {
	b.mu.Lock()
	if b.cur != nil {
		_ = b.cur.Close()
		b.cur = nil
	}
	b.mu.Unlock()
	b.watchers.Wait()
}

// watch keeps a one-shot data watch on node for as long as s lives, as a
// service following its configuration does: every notification re-arms it.
func watch(ctx context.Context, s *recipes.Session, node string) {
	for {
		_, _, ch, err := s.Conn().GetW(node)
		if err != nil {
			select {
			case <-s.Done():
				return
			case <-ctx.Done():
				return
			case <-time.After(50 * time.Millisecond): // retry pacing while disconnected
				continue
			}
		}
		select {
		case <-ch:
		case <-s.Done():
			return
		case <-ctx.Done():
			return
		}
	}
}

// loop runs sections of one recipe until ctx ends or the worker has done
// its sections (then it ends the run with stop).
func (w *worker) loop(ctx context.Context, stop context.CancelFunc, i int, l Loop) {
	sc := w.storeConn()
	defer sc.close()
	for ctx.Err() == nil {
		if n := w.spec.Sections; n > 0 && w.sections.Load() >= int64(n) {
			stop()
			return
		}
		sess, err := w.sessions.get(ctx)
		if err == nil {
			err = w.section(ctx, sess, sc, l)
		}
		if err != nil && ctx.Err() == nil && !errors.Is(err, recipes.ErrSessionLost) && !errors.Is(err, recipes.ErrSessionExpired) {
			fmt.Fprintf(os.Stderr, "chaos worker %d loop %d: %v\n", os.Getpid(), i, err)
			time.Sleep(10 * time.Millisecond) // pacing after an unexpected error
		}
	}
}
