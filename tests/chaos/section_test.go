package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/locks"
)

// held is one acquisition, whatever the recipe.
type held struct {
	recipe  string
	paths   []string
	tokens  []int64
	limit   int
	guards  []*zk.CheckVersionRequest // one per path; nil: this hold does not write
	done    <-chan struct{}           // closed when the hold ends
	cause   func() error              // why it ended
	release func() error
}

// lost reports whether the hold has ended by loss.
func (h *held) lost() bool {
	select {
	case <-h.done:
		return errors.Is(h.cause(), locks.ErrLockLost)
	default:
		return false
	}
}

// holdID returns a new hold id, unique in the run: "<pid>.<n>".
func (w *worker) holdID() string { return fmt.Sprintf("%d.%d", os.Getpid(), w.holds.Add(1)) }

// section takes the loop's lock and works under it (see work).
func (w *worker) section(ctx context.Context, sess *recipes.Session, sc *storeConn, l Loop) error {
	id := w.holdID()
	recipe := l.Recipe
	if recipe == LoopRW {
		recipe = RecipeRead
		if rand.IntN(2) == 0 {
			recipe = RecipeWrite
		}
	}
	paths := []string{l.Path}
	switch {
	case recipe == RecipeMulti:
		paths = pick(l.Paths, 2)
	case len(l.Paths) > 0:
		paths = pick(l.Paths, 1)
	}
	if err := w.log.Append(Event{Type: EvWait, Hold: id, Recipe: recipe, Paths: paths}); err != nil {
		return err
	}
	// ctx bounds the wait only: if it ends once the lock is taken, the
	// section finishes and releases as usual.
	h, err := w.acquire(ctx, sess, recipe, paths, l.Max)
	if err != nil {
		return err
	}
	return w.work(sess, sc, id, h)
}

// work is one section of the acquired hold h, whatever the recipe: it logs
// the enter, writes its tokens, works for the hold time (writing again every
// pace), writes again, logs the exit (or the loss) and releases. With a
// store, the first of those writes is a read of the store, and the others
// write to it (see storeSection).
func (w *worker) work(sess *recipes.Session, sc *storeConn, id string, h *held) error {
	w.sections.Add(1)
	if err := w.log.Append(Event{Type: EvEnter, Hold: id, Recipe: h.recipe, Paths: h.paths, Tokens: h.tokens, Limit: h.limit}); err != nil {
		return errors.Join(err, h.release())
	}
	var ended atomic.Bool // the exit or loss is logged
	finish := func(loss bool) (exited bool) {
		if !ended.CompareAndSwap(false, true) {
			return false
		}
		ev := Event{Type: EvExit, Hold: id}
		if loss || h.lost() {
			ev = Event{Type: EvLoss, Hold: id, Note: fmt.Sprint(h.cause())}
		}
		_ = w.log.Append(ev)
		return ev.Type == EvExit
	}
	quit := make(chan struct{})
	watcher := make(chan struct{})
	go func() {
		defer close(watcher)
		select {
		case <-h.done:
			if h.lost() {
				finish(true)
			}
		case <-quit:
		}
	}()
	// touch writes the hold's tokens; the last writes go out blind if
	// the spec says so.
	touch := func(_, last bool) { w.writes(sess, id, h, last && w.spec.Blind) }
	if sc != nil {
		st := &storeSection{w: w, c: sc, id: id, h: h, basis: map[string]string{}}
		touch = st.touch
	}
	touch(true, false)
	hold := time.NewTimer(w.spec.Hold) // the work done under the lock
	defer hold.Stop()
	var pace <-chan time.Time
	if w.spec.Pace > 0 {
		t := time.NewTicker(w.spec.Pace)
		defer t.Stop()
		pace = t.C
	}
	for working := true; working; {
		select {
		case <-pace:
			touch(false, false)
		case <-hold.C:
			working = false
		case <-h.done:
			working = false
		}
	}
	touch(false, true)
	exited := finish(false)
	close(quit)
	<-watcher
	err := h.release()
	if errors.Is(err, locks.ErrLockLost) {
		if exited {
			// Lost before the release, though the hold had not
			// said so when the exit was logged.
			_ = w.log.Append(Event{Type: EvLoss, Hold: id, Note: "unlock: " + err.Error()})
		}
		return nil
	}
	return err
}

// writes does one guarded write per path of h, unless h has ended (or
// blind): its token, to the path's resource node, in a zk.Multi behind the
// hold's guard.
func (w *worker) writes(sess *recipes.Session, id string, h *held, blind bool) {
	if h.guards == nil {
		return
	}
	for i, p := range h.paths {
		select {
		case <-h.done:
			if !blind {
				return
			}
		default:
		}
		ops := []any{&zk.SetDataRequest{Path: ResourceOf(p), Data: fmt.Appendf(nil, "%d %s", h.tokens[i], id), Version: -1}}
		if g := h.guards[i]; g != nil {
			ops = append([]any{g}, ops...)
		}
		ev := Event{Type: EvWrite, Hold: id, Paths: []string{p}, Token: h.tokens[i], Begin: time.Now().UnixNano()}
		res, err := sess.Conn().Multi(ops...)
		if err == nil {
			ev.OK, ev.Version = true, res[len(res)-1].Stat.Version
		} else {
			ev.Note = err.Error()
		}
		_ = w.log.Append(ev)
	}
}

// pick returns n of paths at random (all if there are fewer).
func pick(paths []string, n int) []string {
	out := append([]string(nil), paths...)
	rand.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out[:min(n, len(out))]
}

// acquire takes the lock of one recipe through the public API.
func (w *worker) acquire(ctx context.Context, sess *recipes.Session, recipe string, paths []string, leases int) (*held, error) {
	if w.spec.NoLock {
		return unlocked(recipe, paths), nil
	}
	switch recipe {
	case RecipeMutex, RecipeMulti:
		return lockMutexes(ctx, sess, recipe, paths)
	case RecipeRead, RecipeWrite:
		return lockRW(ctx, sess, recipe, paths[0])
	case RecipeLease:
		return lease(ctx, sess, paths[0], leases)
	}
	return nil, fmt.Errorf("unknown recipe %q", recipe)
}

// lockMutexes takes a Mutex, or a MultiLock over one Mutex per path.
func lockMutexes(ctx context.Context, sess *recipes.Session, recipe string, paths []string) (*held, error) {
	members := make([]locks.Locker, len(paths))
	for i, p := range paths {
		m, err := locks.NewMutex(sess, p)
		if err != nil {
			return nil, err
		}
		members[i] = m
	}
	l := members[0]
	if recipe == RecipeMulti {
		ml, err := locks.NewMultiLock(members...)
		if err != nil {
			return nil, err
		}
		l = ml
	}
	h, err := l.Lock(ctx)
	if err != nil {
		return nil, err
	}
	return record(recipe, paths, h, true), nil
}

// lockRW takes an RWMutex's write lock or read lock; readers do not write.
func lockRW(ctx context.Context, sess *recipes.Session, recipe, path string) (*held, error) {
	rw, err := locks.NewRWMutex(sess, path)
	if err != nil {
		return nil, err
	}
	lock := rw.RLock
	if recipe == RecipeWrite {
		lock = rw.Lock
	}
	h, err := lock(ctx)
	if err != nil {
		return nil, err
	}
	return record(recipe, []string{path}, h, recipe == RecipeWrite), nil
}

// lease takes one lease of a Semaphore.
func lease(ctx context.Context, sess *recipes.Session, path string, maxLeases int) (*held, error) {
	s, err := locks.NewSemaphore(sess, path, maxLeases)
	if err != nil {
		return nil, err
	}
	leases, err := s.Acquire(ctx, 1)
	if err != nil {
		return nil, err
	}
	h := record(RecipeLease, []string{path}, leases[0], true)
	h.limit = maxLeases
	return h, nil
}

// record makes the section's record of a Hold: a token, and a guard if it
// writes, for each of paths (a multi-lock's members, whatever their order).
func record(recipe string, paths []string, l *locks.Hold, writes bool) *held {
	h := &held{recipe: recipe, paths: paths, done: l.Done(), cause: l.Err,
		release: func() error { return l.Release(context.Background()) }}
	parts := l.Members()
	if parts == nil {
		parts = []*locks.Hold{l}
	}
	for _, p := range paths {
		i := slices.IndexFunc(parts, func(m *locks.Hold) bool { return m.Path() == p })
		h.tokens = append(h.tokens, parts[i].Token())
		if writes {
			h.guards = append(h.guards, parts[i].Guard()...)
		}
	}
	return h
}

// unlocked is the negative control's hold: no lock at all, and writes
// without a guard.
func unlocked(recipe string, paths []string) *held {
	h := &held{recipe: recipe, paths: paths, done: make(chan struct{}), cause: func() error { return nil },
		release: func() error { return nil }}
	for range paths {
		h.tokens = append(h.tokens, time.Now().UnixNano())
		h.guards = append(h.guards, nil)
	}
	return h
}
