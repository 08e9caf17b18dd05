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

// held is what a Hold holds: one node of the engine's (nodeHold), or a
// multi-lock's members (multiHold). Hold's methods that differ between
// the two ask it.
type held interface {
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

// A nodeHold is one node of the engine's, in sess.
type nodeHold struct {
	sess *recipes.Session
	n    *seqnode.Hold
}

func (o nodeHold) node() string                       { return zpath.Outside(o.sess.Chroot(), o.n.Path()) }
func (o nodeHold) token() int64                       { return o.n.Token() }
func (o nodeHold) members() []*Hold                   { return nil }
func (o nodeHold) guard() []*zk.CheckVersionRequest   { return []*zk.CheckVersionRequest{o.n.Guard()} }
func (o nodeHold) session() (*recipes.Session, error) { return o.sess, nil }
func (o nodeHold) revoked() <-chan struct{}           { return o.n.Revoked() }
func (o nodeHold) whenRevoked(f func())               { o.n.OnRevoke(f) }
func (o nodeHold) releasing()                         {}

// lost is the session's loss, which the engine hold may not have heard of
// yet: a process paused past the session's deadline learns of it here.
func (o nodeHold) lost() error {
	if err := o.sess.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrLockLost, err)
	}
	return nil
}

// release deletes the node; the engine ends the hold, which cancels h's
// context.
func (o nodeHold) release(ctx context.Context, h *Hold) error {
	if err := o.n.Release(ctx); err != nil {
		return fmt.Errorf("release %s: %w", h.path, err)
	}
	return nil
}

// A multiHold is a multi-lock's members, in the order they were taken.
type multiHold struct {
	all    []*Hold
	ending atomic.Bool // the outermost Release has begun: a member's end is not a loss

	mu      sync.Mutex
	merged  chan struct{} // the members' revocations, once asked for
	revokes sync.Once     // closes merged
}

func (m *multiHold) node() string     { return "" }
func (m *multiHold) members() []*Hold { return slices.Clone(m.all) }
func (m *multiHold) releasing()       { m.ending.Store(true) }

// token is 0: no one number fences every member (see Hold.Token).
func (m *multiHold) token() int64 { return 0 }

// guard checks every member.
func (m *multiHold) guard() []*zk.CheckVersionRequest {
	var gs []*zk.CheckVersionRequest
	for _, h := range m.all {
		gs = append(gs, h.Guard()...)
	}
	return gs
}

// session is the members' one session; members in different sessions have
// none.
func (m *multiHold) session() (*recipes.Session, error) {
	var sess *recipes.Session
	for _, h := range m.all {
		s, err := h.held.session()
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
func (m *multiHold) revoked() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.merged == nil {
		m.merged = make(chan struct{})
		m.whenRevoked(func() { m.revokes.Do(func() { close(m.merged) }) })
	}
	return m.merged
}

func (m *multiHold) whenRevoked(f func()) {
	for _, h := range m.all {
		h.held.whenRevoked(f)
	}
}

// lost is the first member's loss.
func (m *multiHold) lost() error {
	for _, h := range m.all {
		if err := h.Err(); err != nil {
			return err
		}
	}
	return nil
}

// release releases the members, last first, and ends h: lost if a member
// was.
func (m *multiHold) release(ctx context.Context, h *Hold) error {
	err := releaseAll(ctx, m.all)
	if errors.Is(err, ErrLockLost) {
		h.end(err)
	} else {
		h.end(ErrReleased)
	}
	return err
}

// engine is the engine's hold of a Hold of one node; nil for a
// multi-lock's.
func (h *Hold) engine() *seqnode.Hold {
	if o, ok := h.held.(nodeHold); ok {
		return o.n
	}
	return nil
}
