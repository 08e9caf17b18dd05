package locks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/seqnode"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// backing is what a Hold rests on: one engine turn (nodeBacking), or a
// multi-lock's members (membersBacking). Hold's methods that differ between
// the two ask it.
type backing interface {
	node() string                       // Hold.Node
	token() int64                       // Hold.Token
	members() []*Hold                   // Hold.Members: a copy
	guard() []*zk.CheckVersionRequest   // Hold.Guard
	session() (*recipes.Session, error) // the one session of every node held
	revoked() <-chan struct{}           // Hold.Revoked
	whenRevoked(f func())               // calls f at the first revocation request
	lost() error                        // a loss the Hold has not recorded yet, or nil

	// releasing says the outermost Release has begun, under the Hold's
	// lock; release then lets go and ends h.
	releasing()
	release(ctx context.Context, h *Hold) error
}

// A nodeBacking is one engine turn, in sess.
type nodeBacking struct {
	sess *recipes.Session
	turn *seqnode.Turn
}

func (o nodeBacking) node() string     { return zpath.Outside(o.sess.Chroot(), o.turn.Path()) }
func (o nodeBacking) token() int64     { return o.turn.Token() }
func (o nodeBacking) members() []*Hold { return nil }
func (o nodeBacking) guard() []*zk.CheckVersionRequest {
	return []*zk.CheckVersionRequest{o.turn.Guard()}
}
func (o nodeBacking) session() (*recipes.Session, error) { return o.sess, nil }
func (o nodeBacking) revoked() <-chan struct{}           { return o.turn.Revoked() }
func (o nodeBacking) whenRevoked(f func())               { o.turn.OnRevoke(f) }
func (o nodeBacking) releasing()                         {}

// lost is the session's loss, which the engine's turn may not have heard of
// yet: a process paused past the session's deadline learns of it here.
func (o nodeBacking) lost() error {
	if err := o.sess.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrLockLost, err)
	}
	return nil
}

// release deletes the node; the engine ends the turn, which ends h and
// cancels its context.
func (o nodeBacking) release(ctx context.Context, h *Hold) error {
	if err := o.turn.Release(ctx); err != nil {
		return fmt.Errorf("release %s: %w", h.path, err)
	}
	return nil
}

// A membersBacking is a multi-lock's members, in path order.
type membersBacking struct {
	all    []*Hold
	ending atomic.Bool // the outermost Release has begun: a member's end is not a loss

	mu      sync.Mutex
	merged  chan struct{} // the members' revocations, once asked for
	revokes sync.Once     // closes merged
}

func (m *membersBacking) node() string     { return "" }
func (m *membersBacking) members() []*Hold { return slices.Clone(m.all) }
func (m *membersBacking) releasing()       { m.ending.Store(true) }

// token is 0: no one number fences every member (see Hold.Token).
func (m *membersBacking) token() int64 { return 0 }

// guard checks every member.
func (m *membersBacking) guard() []*zk.CheckVersionRequest {
	var gs []*zk.CheckVersionRequest
	for _, h := range m.all {
		gs = append(gs, h.Guard()...)
	}
	return gs
}

// session is the members' one session; members in different sessions have
// none.
func (m *membersBacking) session() (*recipes.Session, error) {
	var sess *recipes.Session
	for _, h := range m.all {
		s, err := h.backing.session()
		if err != nil {
			return nil, err
		}
		if sess != nil && s != sess {
			return nil, errors.New("its members use different sessions")
		}
		sess = s
	}
	return sess, nil
}

// revoked is closed at the first revocation request to any member.
func (m *membersBacking) revoked() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.merged == nil {
		m.merged = make(chan struct{})
		m.whenRevoked(func() { m.revokes.Do(func() { close(m.merged) }) })
	}
	return m.merged
}

func (m *membersBacking) whenRevoked(f func()) {
	for _, h := range m.all {
		h.backing.whenRevoked(f)
	}
}

// lost is the first member's loss.
func (m *membersBacking) lost() error {
	for _, h := range m.all {
		if err := h.Err(); err != nil {
			return err
		}
	}
	return nil
}

// release releases the members, all at once, and ends h: lost if a
// member was.
func (m *membersBacking) release(ctx context.Context, h *Hold) error {
	err := releaseAll(ctx, m.all)
	if errors.Is(err, ErrLockLost) {
		h.end(err)
	} else {
		h.end(ErrReleased)
	}
	return err
}

// turn is the engine's turn of a Hold of one node; nil for a
// multi-lock's.
func (h *Hold) turn() *seqnode.Turn {
	if o, ok := h.backing.(nodeBacking); ok {
		return o.turn
	}
	return nil
}
