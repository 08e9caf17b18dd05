package seqnode

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/znode"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// Errors a Turn ends with. They are locks.ErrLockLost and locks.ErrReleased:
// declared here, where the holds that end with them can name them, and
// exported by package locks.
var (
	ErrLost     = errors.New("locks: lock lost")
	ErrReleased = errors.New("locks: released")
)

// A Turn is one node that holds its lock. It ends, with an error wrapping
// ErrLost, when the node is deleted by anyone else or the session ends, and
// it notes revocation requests written into the node.
//
// A turn that waited for its lock already watches its own node's data, which
// reports both deletion and revocation. A turn taken at once watches the
// lock directory instead, through the listing that showed it holds: it costs
// no request while nothing else happens there. At the first change in the
// directory, or when Revoked needs it, the turn reads its node once
// and watches its data from then on.
type Turn struct {
	sess    znode.Session
	path    string
	ended   *signal[error]    // the turn ended, with why
	revoked *signal[struct{}] // the first revocation request came
	toData  chan struct{}     // asks the watcher to watch our node's data
	stop    context.CancelFunc
	wg      sync.WaitGroup // joins the watcher and its reads

	// releasing is set, under mu, when Release begins: its delete has the
	// last word. The watcher reads it without mu.
	releasing atomic.Bool

	mu        sync.Mutex // guards the fields below
	marks     []string   // the marks the release's delete writes (marks.go)
	token     int64      // 0 until known
	dataAsked bool       // toData has been signalled
	released  bool       // Release's delete was confirmed
}

// bareTurn is the turn of a node that only its recipe uses (a Gate): it
// has no token and watches nothing but the session.
func bareTurn(sess znode.Session, path string) *Turn {
	return newTurn(sess, path, 0, nil, false, false)
}

// ownTurn is the turn of a node that waited: it goes on with the waiter's
// watch of the node's data, and its token is the node's creation zxid.
// revoked says that a revocation request came while it waited.
func ownTurn(sess znode.Session, path string, own *ownWatch, revoked bool) *Turn {
	return newTurn(sess, path, own.stat.Czxid, own.events, true, revoked)
}

// newTurn starts the turn of our node at path, with its token (0 if not
// known yet; a bare turn has none) and the watch it goes on with: events
// come from our node's data watch when dataWatch is true, else from the
// directory's child watch (nil: the turn watches only the session).
// revoked says that a revocation request came while it waited.
func newTurn(sess znode.Session, path string, token int64, events <-chan zk.Event, dataWatch, revoked bool) *Turn {
	ctx, stop := context.WithCancel(context.Background())
	t := &Turn{
		sess:      sess,
		path:      path,
		token:     token,
		ended:     newSignal[error](),
		revoked:   newSignal[struct{}](),
		toData:    make(chan struct{}, 1),
		stop:      stop,
		dataAsked: dataWatch,
	}
	if revoked {
		t.revoke()
	}
	t.wg.Add(1)
	go t.follow(ctx, events, dataWatch)
	return t
}

// Path is the full path of the node that holds the lock.
func (t *Turn) Path() string { return t.path }

// Name is the name of that node, without its directory.
func (t *Turn) Name() string { return zpath.Base(t.path) }

// Token returns the fencing token: a zxid no earlier than the one that
// created the node (that one, or the directory's pzxid from the listing that
// showed it held: see tokenFromListing), so every later holder of the lock
// has a larger token; or a downgrade's, its write hold's (Spec.Token).
// Acquire makes sure it is known; a bare turn has none.
func (t *Turn) Token() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.token
}

// readToken reads the token: the listing or the watch that made the turn
// did not show it.
func (t *Turn) readToken(ctx context.Context) error {
	st, err := znode.Stat(ctx, t.sess, t.path)
	switch {
	case err != nil:
		return fmt.Errorf("read %s: %w", t.path, err)
	case st == nil:
		return fmt.Errorf("%w: node %s was deleted", ErrLost, t.path)
	}
	t.setTokenIfUnknown(st.Czxid)
	return nil
}

func (t *Turn) setToken(token int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.token = token
}

func (t *Turn) setTokenIfUnknown(token int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.token == 0 {
		t.token = token
	}
}

// Done is closed when the turn ends: lost, or released.
func (t *Turn) Done() <-chan struct{} { return t.ended.ch }

// Err is nil while the turn lasts; then it wraps ErrLost or is ErrReleased.
func (t *Turn) Err() error {
	err, _ := t.ended.value()
	return err
}

// Revoked returns a channel closed when someone asks the holder to let go by
// writing RevokeData into its node (Curator's Revoker). Nothing is released
// for it. The first call makes sure the node's data is watched, and sees a
// request written before it.
func (t *Turn) Revoked() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.askDataLocked()
	return t.revoked.ch
}

// OnRevoke arranges for f to be called once at the first revocation request,
// at once if one has come; like Revoked, it makes sure the node's data is
// watched. f must not block.
func (t *Turn) OnRevoke(f func()) {
	t.mu.Lock()
	t.askDataLocked()
	t.mu.Unlock()
	t.revoked.then(func(struct{}) { f() })
}

// WatchNode has the turn read its node and watch its data now, as Revoked
// does, rather than at the first change in the directory: a read sent beside
// another request of the session shares its round trip, where one sent at
// that change, alone, would cost one of its own.
func (t *Turn) WatchNode() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.askDataLocked()
}

// Unmarked has the release write no mark of our node, and reports
// whether it can: not once Release has begun, whose delete may have taken
// its marks already. A read/write lock's downgrade calls it before it puts
// a read node at our node's place in the queue, so that a writer behind
// does not take our release for the end of the holds ahead of it. Marks
// owed for nodes ahead are still written.
func (t *Turn) Unmarked() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.releasing.Load() {
		return false
	}
	t.marks = slices.DeleteFunc(slices.Clone(t.marks), func(m string) bool { return m == MarkOf(t.path) })
	return true
}

func (t *Turn) askDataLocked() {
	if !t.dataAsked {
		t.dataAsked = true
		t.toData <- struct{}{}
	}
}

// Guard is a check to put first in a zk.Multi: the transaction fails unless
// our node still exists, that is, unless we still hold the lock.
func (t *Turn) Guard() *zk.CheckVersionRequest {
	return &zk.CheckVersionRequest{Path: t.path, Version: -1}
}

// AfterRevoke arranges for f to be called once at the first revocation
// request that the turn sees, without making it watch for one (as Revoked
// and OnRevoke do). f must not block.
func (t *Turn) AfterRevoke(f func()) { t.revoked.then(func(struct{}) { f() }) }

// OnEnd arranges for f to be called once with the turn's error when it ends,
// at once if it has ended already. f runs on the goroutine that ends the turn
// and must not block.
func (t *Turn) OnEnd(f func(error)) { t.ended.then(f) }

// end records why the turn ended, once, and returns the error it ended with
// earlier, if it had.
func (t *Turn) end(err error) error {
	if earlier, ok := t.ended.fire(err); !ok {
		return earlier
	}
	return nil
}

func (t *Turn) revoke() { t.revoked.fire(struct{}{}) }
