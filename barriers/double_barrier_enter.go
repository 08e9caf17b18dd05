package barriers

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/jute"
	"github.com/zkrecipes/recipes/internal/layout"
	"github.com/zkrecipes/recipes/internal/znode"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// Enter joins the barrier and waits until it opens: until the member count
// has entered, or at once if it is open already. If ctx ends or the session
// ends first, Enter removes this member's node and returns the error; if the
// barrier opened with this member counted in the meantime, Enter returns nil.
// A ctx that has already ended gets its cause back, and nothing is created.
// A member made for another count than one already at the barrier (before
// it opens) gets ErrMembers, and its node is removed.
func (b *DoubleBarrier) Enter(ctx context.Context) error {
	if err := args.Context(ctx, "barriers: DoubleBarrier.Enter"); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.entered {
		return fmt.Errorf("enter %s: %w", b.at.Path, ErrEntered)
	}
	if err := znode.CtxErr(ctx); err != nil {
		return fmt.Errorf("enter %s: %w", b.at.Path, err)
	}
	err := b.enter(ctx)
	switch {
	case errors.Is(err, ErrMembers):
		// Refused: out, even if the barrier opened (a Curator member,
		// which cannot tell, may have counted us).
		if derr := znode.DeleteDetached(b.sess, b.node); derr != nil && b.sess.Err() == nil {
			err = errors.Join(err, derr)
		}
	case err != nil && b.sess.Err() == nil:
		// Give up, unless the barrier opened counting us.
		if opened, gerr := b.giveUp(); gerr != nil {
			err = errors.Join(err, gerr)
		} else if opened {
			err = nil
		}
	case err != nil:
		// Our node died with the session, unless the caller's
		// connection keeps it (NewSession): Delete sees to that.
		_ = znode.DeleteDetached(b.sess, b.node)
	}
	if err != nil {
		return fmt.Errorf("enter %s: %w", b.at.Path, err)
	}
	b.entered = true
	return nil
}

func (b *DoubleBarrier) enter(ctx context.Context) error {
	// Watch ready and create our node in one round trip: the two requests
	// are independent. The members are listed in that round trip too,
	// once our create is being written (znode.AfterWrite), so that the
	// listing follows it; tryOpen uses it if it shows our node.
	type watched struct {
		open bool
		ev   <-chan zk.Event
		err  error
	}
	readyc := make(chan watched, 1)
	go func() {
		var w watched
		w.open, w.ev, w.err = znode.ExistsW(ctx, b.sess, b.ready)
		readyc <- w
	}()
	type listing struct {
		names []string
		err   error
	}
	done := znode.AfterWrite(ctx, b.sess, b.node, func(ctx context.Context) listing {
		names, err := znode.Children(ctx, b.sess, b.at.Dir)
		return listing{names, err}
	})
	err := b.sess.Retry(ctx, func(conn *zk.Conn) error {
		_, err := znode.Create(b.sess, conn, b.node, zk.FlagEphemeral, b.at.Data, b.at.Dir)
		if errors.Is(err, zk.ErrNodeExists) {
			return nil // ours: a retry after the reply to our create was lost
		}
		return err
	})
	members, listed := done(err)
	ready := <-readyc
	switch {
	case err != nil:
		return err
	case ready.err != nil:
		return ready.err
	case ready.open:
		return nil
	}
	var first []string
	if listed && members.err == nil && slices.Contains(members.names, zpath.Base(b.node)) {
		first = members.names
	}
	if open, err := b.tryOpen(ctx, first); err != nil || open {
		return err
	}
	// Not enough members yet: the member that completes the count opens
	// the barrier. Ready is only ever created by such a member, so its
	// creation is enough: ready may be gone again by the time we could
	// look, deleted by a member that has left already (or given up
	// leaving).
	return awaitCreated(ctx, b.sess, b.ready, ready.ev)
}

// awaitCreated waits until the node at path is created, given the watch of
// an ExistsW that found it missing. Any other event on the watch (none
// should come) means looking again.
func awaitCreated(ctx context.Context, sess *recipes.Session, path string, ev <-chan zk.Event) error {
	for {
		select {
		case e := <-ev:
			switch e.Type {
			case zk.EventNodeCreated:
				return nil
			case zk.EventNotWatching:
				return znode.WatchStopped(sess, e.Err)
			}
		case <-sess.Done():
			return sess.Err()
		case <-ctx.Done():
			return znode.CtxErr(ctx)
		}
		exists, watch, err := znode.ExistsW(ctx, sess, path)
		if err != nil || exists {
			return err
		}
		ev = watch
	}
}

// tryOpen counts the members and, if there are enough, opens the barrier:
// it creates the ready node in one transaction with a check that every
// member it counted is still there, so a member that gave up meanwhile is
// never counted. It reports whether the barrier is open. It counts first,
// if not nil, a listing made after our create, then lists anew.
func (b *DoubleBarrier) tryOpen(ctx context.Context, first []string) (bool, error) {
	for {
		names := first
		first = nil
		var err error
		if names == nil {
			if names, err = znode.Children(ctx, b.sess, b.at.Dir); err != nil {
				return false, err
			}
		}
		if slices.Contains(names, readyNode) {
			return true, nil
		}
		// Another recipe's nodes would count as members.
		if err := layout.Check(b.at.Path, names, layout.DoubleBarrier); err != nil {
			return false, err
		}
		if !slices.Contains(names, zpath.Base(b.node)) {
			return false, fmt.Errorf("%w: %s", ErrMemberLost, b.node)
		}
		// Every member that came before us is in this listing: one that
		// counts to another number would never open the barrier with us,
		// or would open it without us.
		if n := disagreeing(names, b.members); n != 0 {
			return false, fmt.Errorf("%w: a member there waits for %d members, this one for %d", ErrMembers, n, b.members)
		}
		if len(names) < b.members {
			return false, nil
		}
		ops := b.openOps(counted(names, zpath.Base(b.node), b.members))
		if size, _ := jute.Multi(ops...); size > jute.MaxRequest {
			// Only if other members' names are longer than a UUID:
			// nodes this recipe did not make.
			return false, args.Fits("opening the barrier, whose other members have names longer than a UUID,", size)
		}
		// Sent again after a lost reply, as any request of the session
		// (Session.Retry), so that one the server drops fails here: if
		// the first was applied, ready exists, which says it is open.
		err = b.sess.Retry(ctx, func(conn *zk.Conn) error {
			_, err := znode.Multi(conn, ops...)
			return err
		})
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, zk.ErrNodeExists):
			return true, nil // opened, by someone else or by our lost try
		case errors.Is(err, zk.ErrNoNode):
			continue // a member left: count again
		default:
			return false, err
		}
	}
}

// openOps is the transaction that opens the barrier for the members named:
// a check that each is there, and the create of ready.
func (b *DoubleBarrier) openOps(names []string) []any {
	ops := make([]any, 0, len(names)+1)
	for _, n := range names {
		ops = append(ops, &zk.CheckVersionRequest{Path: zpath.Join(b.at.Dir, n), Version: -1})
	}
	return append(ops, &zk.CreateRequest{Path: b.ready, Data: b.at.Data, Acl: b.sess.ACL(), Flags: zk.FlagPersistent})
}

// counted picks the members that opening the barrier counts: ours and, of
// the others, the n-1 with the shortest names, so that the transaction's size
// is bounded by n (NewDoubleBarrier checks it). Members past n are not
// needed: n present are what opens the barrier.
func counted(names []string, ours string, n int) []string {
	others := slices.DeleteFunc(slices.Clone(names), func(s string) bool { return s == ours })
	slices.SortStableFunc(others, func(a, b string) int { return len(a) - len(b) })
	return append([]string{ours}, others[:min(n-1, len(others))]...)
}

// giveUp deletes our node and then looks at ready: the member that opens
// the barrier checks, in the transaction that creates ready, that every
// member it counted is there, so if ready exists after our node is gone, we
// were counted, or enough others were while we were entering: either way we
// are in, as a member arriving at an open barrier is, and our node goes
// back. It reports whether we are in.
func (b *DoubleBarrier) giveUp() (bool, error) {
	if err := znode.DeleteDetached(b.sess, b.node); err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.sess.Timeout())
	defer cancel()
	var open bool
	err := b.sess.Retry(ctx, func(conn *zk.Conn) error {
		var err error
		if open, _, err = conn.Exists(b.ready); err != nil || !open {
			return znode.RefusedRead(err, b.ready)
		}
		_, err = conn.Create(b.node, b.at.Data, zk.FlagEphemeral, b.sess.ACL())
		if errors.Is(err, zk.ErrNodeExists) {
			return nil
		}
		return znode.RefusedCreate(err, b.node)
	})
	return open && err == nil, err
}
