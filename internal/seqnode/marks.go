package seqnode

import (
	"context"
	"errors"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/jute"
	"github.com/zkrecipes/recipes/internal/znode"
)

// Release marks: how a waiter that was not second in line holds, when the
// node it waits for goes, without reading the children again.
//
// A waiter X watches the one node W just ahead of it. When W is deleted, X
// cannot tell from that event whether W held (then nothing is ahead of X, and
// X holds) or W was a waiter that gave up or whose session expired (then
// whoever holds still does). A mark tells it, at no cost in round trips or
// transactions: a holder of a node whose Shape marks (Spec.marks) releases with one multi that
// creates a node named MarkOf(W), deletes it, and deletes W. The mark exists
// only inside that transaction, so no listing ever shows it and no failure
// can leave it behind; but it fires the watch X set on its path (an exists
// watch, sent with the watch on W, in the same round trip), in the
// transaction that deletes W, and go-zookeeper hands X that event before W's.
// So when X sees W go it looks, without waiting, for the mark's event: there,
// W held, and X holds too; missing, X lists again as before.
//
// Why a mark means W held. A mark is only written by:
//
//   - W's holder, releasing: W was then the lowest node, and no node can
//     come before it later (sequence numbers grow; a read/write lock's
//     downgrade puts a read node at W's place, but W's release then
//     writes no mark: Turn.Unmarked). So once W is gone, nothing is ahead
//     of X: nodes created after X's listing come after X.
//   - a waiter that never saw it, in a later transaction (see below). That
//     must not mislead anyone: it is written only by a waiter Y whose node
//     still exists (the same transaction deletes Y's node) and whose
//     listing showed W just ahead of it. While Y's node exists no other
//     live node can have listed W just ahead (it would have to sit between W
//     and Y, which Y's listing rules out, or come after Y, which needs Y
//     gone). A waiter whose node was deleted before may still watch the mark;
//     its own node's deletion came first, and a waiter looks for that event
//     too before it trusts a mark. That event is there only if its watch of
//     its own node and the mark's came over one connection: after a
//     reconnect go-zookeeper sets the watches again in a request of its
//     own, which requests sent meanwhile can overtake. So a waiter trusts a
//     mark (or, second in line, a deletion) only if its session lost no
//     connection since it watched its own node (Session.Disconnects), and
//     else reads the children; a session that cannot count its lost
//     connections (recipes.NewSession) never trusts one.
//
// Nothing else makes a node of a mark's name. One made by hand in the lock's
// directory would be read as a mark, as a lock node deleted by hand is read
// as released; and while it stands, releases that would write that mark
// are refused by ZooKeeper and delete plainly.
//
// Why a waiter writes marks at all. An exists watch on a path that is never
// created stays set, in ZooKeeper and in go-zookeeper, until the session
// ends; go-zookeeper can neither remove one (ZooKeeper's removeWatches) nor
// forget it. A waiter's mark watch is spent by the mark when its node ahead
// held, but not when that node was a waiter that left, or a holder released
// by another client (Curator) or by its session's end. Such a waiter keeps
// the mark's path and writes it later, in the multi that deletes its own
// node (its release, or the delete when it gives up), which spends the watch
// at no extra transaction. Such a watch stays set until the session ends
// only when that multi is not made: the waiter's own node was deleted by
// someone else (it queues again: its listing no longer vouches for it); its
// delete is left to the session in the background (a Release or a
// give-up whose delete could not reach ZooKeeper in time: that delete is
// plain); ZooKeeper refused a mark (then the node is deleted plainly); or the
// waiter owes more than MaxOwed, or more than fit in one request with its
// path (Spec.owe).

// MaxOwed bounds the marks a waiter keeps to write (see above), so that the
// multi that writes them stays small; a mark dropped leaves its watch set
// until the session ends. A waiter owes more than a few only when many
// waiters ahead of it leave, one after another, from the back.
const MaxOwed = 32

// owe adds a mark to those a waiter at path keeps to write, unless it keeps
// MaxOwed, or the multi that writes them with its own mark would be larger
// than ZooKeeper takes (long paths): then the mark is dropped.
func (s Spec) owe(path string, acl []zk.ACL, marks *[]string, mark string) {
	if len(*marks) >= MaxOwed {
		return
	}
	all := append(append([]string{}, *marks...), mark, MarkOf(path))
	if markedDeleteSize(path, all, acl) <= jute.MaxRequest {
		*marks = append(*marks, mark)
	}
}

// markSuffix makes a mark's name from the name of the node it marks; the
// result is not a lock node's name, and no listing ever shows it anyway.
const markSuffix = ".released"

// MarkOf is the path of the mark of the node at path.
func MarkOf(path string) string { return path + markSuffix }

// errMarkRefused reports that ZooKeeper refused a mark (a quota, say): the
// node is then deleted on its own, without one.
var errMarkRefused = errors.New("mark refused")

// deleteMarked deletes the node at path in one multi that first creates and
// deletes each mark in marks. It returns zk.ErrNoNode if the node was gone
// (and then nothing was written), the connection's error, or
// errMarkRefused for any other failure (a mark refused, a request too
// large): the caller then deletes the node plainly, which reports whatever
// is wrong with it.
func deleteMarked(conn *zk.Conn, path string, marks []string, acl []zk.ACL) error {
	ops := markOps(path, marks, acl)
	if size, _ := jute.Multi(ops...); size > jute.MaxRequest { // markOps makes only known ops
		return errMarkRefused // never sent: ZooKeeper would drop the connection
	}
	res, err := conn.Multi(ops...)
	switch {
	case err == nil:
		return nil
	case len(res) == len(ops): // an op failed: below
	case znode.Retryable(err):
		return err // the connection failed: try again
	default:
		return errMarkRefused // the request itself failed (too large, say)
	}
	for _, r := range res[:len(ops)-1] {
		if r.Error != nil {
			return errMarkRefused
		}
	}
	if errors.Is(res[len(ops)-1].Error, zk.ErrNoNode) {
		return zk.ErrNoNode
	}
	return errMarkRefused
}

// leave deletes our node at path when the acquisition gives up, writing the
// marks in the same transaction (see above); without marks, or if they are
// refused or the node cannot be reached in time, it deletes as
// znode.DeleteDetached does.
func leave(sess znode.Session, path string, marks []string) {
	if len(marks) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), sess.Timeout())
		err := sess.Retry(ctx, func(conn *zk.Conn) error {
			return deleteMarked(conn, path, marks, sess.ACL())
		})
		cancel()
		if err == nil || errors.Is(err, zk.ErrNoNode) {
			return
		}
	}
	_ = znode.DeleteDetached(sess, path)
}

// A markWatch is a waiter's exists watch on the mark of the node it waits
// for.
type markWatch struct {
	path   string
	events <-chan zk.Event // nil if the watch could not be set
}

// fired reports, without waiting, whether the mark was written: its event
// has come.
func (m *markWatch) fired() bool {
	if m == nil || m.events == nil {
		return false
	}
	select {
	case e := <-m.events:
		m.events = nil
		return e.Type == zk.EventNodeCreated
	default:
		return false
	}
}

// ownMark returns the marks a turn of our node at path writes when it is
// released: owed, those its wait left it to write, and, if the spec marks,
// its own.
func (s Spec) ownMark(owed []string, path string) []string {
	if !s.marks() {
		return owed
	}
	return append(owed, MarkOf(path))
}
