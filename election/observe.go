package election

import (
	"context"
	"errors"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/layout"
	"github.com/zkrecipes/recipes/internal/seqnode"
	"github.com/zkrecipes/recipes/internal/znode"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// Observe sends the latch's leader on the channel it returns: the leader
// now, then each new one, until ctx ends or the session does; the channel
// is then closed. A zero Participant (no Path) says that nobody campaigns.
// A nil ctx gets a closed channel.
//
// Observe watches the leader's node alone (the directory while nobody
// campaigns), so participants who join or leave behind the leader cost it
// nothing, and a new leader costs one listing and one read however many
// wait. It reports who leads, not every term: each send waits for the
// reader, and a leader whose whole term passed while the reader was slow,
// or between two looks, may not be sent.
func (l *Latch) Observe(ctx context.Context) <-chan recipes.Participant {
	return observe(ctx, l.sess, l.dir, recipes.KindLatch, layout.LatchLockName)
}

// Observe sends the selector's leader as Latch.Observe does.
func (s *Selector) Observe(ctx context.Context) <-chan recipes.Participant {
	return observe(ctx, s.sess, s.dir, recipes.KindMutex, layout.MutexLockName)
}

// observe follows the head of the queue in dir, the node that leads (its
// deletion ends the term), or dir itself while nobody campaigns. Observe's
// doc says what that costs and what it may miss.
func observe(ctx context.Context, sess *recipes.Session, dir string, kind recipes.Kind, lockName string) <-chan recipes.Participant {
	ch := make(chan recipes.Participant)
	if args.Context(ctx, "election: Observe") != nil {
		close(ch)
		return ch
	}
	go func() {
		defer close(ch)
		sent, last := false, ""
		for {
			p, events, err := head(ctx, sess, dir, kind, lockName)
			if err != nil {
				if ctx.Err() != nil || sess.Err() != nil {
					return
				}
				// A read that failed for another reason (a refused one):
				// look again, not at once.
				if !pause(ctx, sess) {
					return
				}
				continue
			}
			if events == nil {
				continue // the head went between the listing and its read
			}
			if !sent || p.Path != last {
				select {
				case ch <- p:
					sent, last = true, p.Path
				case <-ctx.Done():
					return
				case <-sess.Done():
					return
				}
			}
			if err := znode.WaitEvent(ctx, sess, events); err != nil && (ctx.Err() != nil || sess.Err() != nil) {
				return
			}
		}
	}()
	return ch
}

// head reads the participant at the head of dir's queue and watches it; or,
// if nobody campaigns, watches dir and returns a zero Participant. nil
// events means the head went before it could be read: list again.
func head(ctx context.Context, sess *recipes.Session, dir string, kind recipes.Kind, lockName string) (recipes.Participant, <-chan zk.Event, error) {
	names, err := znode.Children(ctx, sess, dir)
	if err != nil {
		return recipes.Participant{}, nil, err
	}
	var first *seqnode.Node
	for _, n := range seqnode.ParseAll(names, lockName) {
		if n.HasSeq {
			first = &n
			break
		}
	}
	if first == nil {
		// Nobody campaigns: watch the directory for the first who does (a
		// second listing, but only while the election is idle). A missing
		// directory is watched for its creation.
		children, _, events, err := znode.ChildrenW(ctx, sess, dir)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			exists, events, err := znode.ExistsW(ctx, sess, dir)
			if exists {
				events = nil // made meanwhile: list again
			}
			return recipes.Participant{}, events, err
		case err != nil:
			return recipes.Participant{}, nil, err
		}
		for _, n := range seqnode.ParseAll(children, lockName) {
			if n.HasSeq {
				return recipes.Participant{}, nil, nil // someone came meanwhile
			}
		}
		return recipes.Participant{}, events, nil
	}
	path := zpath.Join(dir, first.Name)
	data, st, events, err := znode.GetW(ctx, sess, path)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return recipes.Participant{}, nil, nil
	case err != nil:
		return recipes.Participant{}, nil, err
	}
	return recipes.Participant{
		Path: zpath.Outside(sess.Chroot(), path), Kind: kind, Data: data, Created: time.UnixMilli(st.Ctime),
		Token: st.Czxid, Session: st.EphemeralOwner, Holds: true,
	}, events, nil
}

// pause waits a little before a read is tried again, and reports whether
// ctx and the session are still alive.
func pause(ctx context.Context, sess *recipes.Session) bool {
	select {
	case <-time.After(100 * time.Millisecond):
		return true
	case <-ctx.Done():
		return false
	case <-sess.Done():
		return false
	}
}
