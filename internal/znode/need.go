package znode

import (
	"context"
	"sync"
	"time"
)

// Need is how the recipes tell their session when something on it needs the
// loss promise, and how they wait for a proof of life when it has none.
//
// The session's keep-alive keeps a loss deadline: the newest proof that the
// leader heard from the session, plus a budget short of the session timeout
// (recipes/keepalive.go). While an acquisition, a wait in a line or a hold
// is under way on the session, that deadline passing ends the session, so
// that the holder is told before the leader can expire it. While nothing
// is, nobody is owed that, and the deadline passing ends nothing: the
// session is then only unproven, and the next acquisition waits for a new
// proof before it begins.
//
// The methods the recipes call (Engage and the function it returns) call
// nothing else of this module: they are on the path of every acquisition
// (make enginepath).
type Need struct {
	mu      sync.Mutex
	engaged int           // acquisitions, waits and holds under way, each begun before admit
	waiting int           // callers waiting for a proof (Engage) or for a probe's answer (Want)
	until   time.Time     // the loss deadline; zero while there is no proof
	admit   time.Time     // until when an acquisition may begin on the proof (see Move)
	moved   chan struct{} // closed and replaced when until moves; nil until someone waits
	wake    chan struct{} // holds a token when an acquisition began on an idle session, unless planned busy (Wake)
	wanted  chan struct{} // holds a token when a caller began to wait for a probe
	hot     bool          // the keep-alive's next probe is on a busy session's cadence (Plan)
}

func newNeed() Need { return Need{wake: make(chan struct{}, 1), wanted: make(chan struct{}, 1)} }

// Need is the session's Need.
func (p *Parts) Need() *Need { return &p.need }

// Engage counts one more acquisition on the session, and returns the
// function that ends it (call it once, when the acquisition fails or its
// hold ends). If the session has no proof of life now (its deadline has
// passed, while nothing needed it, or it is too close for the probes of a
// busy session to prove it again in time), Engage first waits for one that
// is not. It reports
// false, and counts nothing, if ctx or the session (done) ends first.
func (n *Need) Engage(ctx context.Context, done <-chan struct{}) (end func(), ok bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for !time.Now().Before(n.admit) {
		n.waiting++
		if n.engaged+n.waiting == 1 {
			select {
			case n.wake <- struct{}{}:
			default:
			}
		}
		if n.moved == nil {
			n.moved = make(chan struct{})
		}
		moved := n.moved
		n.mu.Unlock()
		select {
		case <-moved:
		case <-done:
		case <-ctx.Done():
		}
		n.mu.Lock()
		n.waiting--
		select {
		case <-done:
			return nil, false
		case <-ctx.Done():
			return nil, false
		default:
		}
	}
	n.engaged++
	if n.engaged+n.waiting == 1 && !n.hot {
		select {
		case n.wake <- struct{}{}:
		default:
		}
	}
	return n.disengage, true
}

func (n *Need) disengage() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.engaged--
}

// Want counts a caller that waits for a keep-alive probe's answer (the
// session's Retry, after a connection closed under a call), so that the
// keep-alive probes as often as it does for a hold until it calls the
// function returned.
func (n *Need) Want() (end func()) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.waiting++
	select {
	case n.wanted <- struct{}{}:
	default:
	}
	return func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		n.waiting--
	}
}

// Wake receives a token when an acquisition began on a session on which
// nothing else was under way: at once if it waits for a proof, else only if
// the keep-alive last planned its next probe for an idle session (Plan).
func (n *Need) Wake() <-chan struct{} { return n.wake }

// Wanted receives a token when a caller began to wait for a probe (Want).
func (n *Need) Wanted() <-chan struct{} { return n.wanted }

// Plan reports whether anything on the session needs its probes now, for
// the keep-alive to plan its next probe on. An acquisition that begins on
// the proof while that plan was a busy session's does not wake the
// keep-alive: planned again, the next probe would be due when it is, or,
// if a Retry's wait (Want) had put it off to a tenth of the timeout after
// that wait began, sooner; it goes within that tenth all the same, before
// the deadline (an acquisition is admitted only with a tenth to spare). So
// a session that locks and releases over and over wakes it only when one
// of its probes found it idle, not at each lock.
func (n *Need) Plan() (busy bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.hot = n.engaged+n.waiting > 0
	return n.hot
}

// Move sets the loss deadline, and until when an acquisition may begin
// without waiting (admit, no later than until; zero for not at all), and
// wakes those that wait for a proof.
func (n *Need) Move(until, admit time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.until, n.admit = until, admit
	if n.moved != nil {
		close(n.moved)
		n.moved = nil
	}
}

// Lapsed reports whether the deadline has passed at now while something was
// engaged: the session must end, with ErrSessionLost.
func (n *Need) Lapsed(now time.Time) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.engaged > 0 && !n.until.IsZero() && !now.Before(n.until)
}
