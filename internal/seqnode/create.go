package seqnode

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/znode"
	"github.com/zkrecipes/recipes/internal/zpath"
)

// create makes our protected ephemeral sequential node and returns its
// path. If a create's reply is lost, the next try first looks for the node
// by its UUID, so a retry never leaves a second node.
//
// On a session whose writes it sees (znode.Internals.Sent), create also
// lists the directory in the same round trip: the listing is queued once
// the create is being written (znode.AfterWrite), so it goes out after the
// create on that connection, and ZooKeeper, which serves one session's
// requests in order, answers it after applying the create. The listing is
// returned, with the error reading it gave (a directory another recipe
// uses, say), only if it shows our node; it does not when the create took
// more than one try or had to make its parents first, or the connection
// changed in between. Then acquire lists again, as it does on a session
// whose writes it does not see, and Sent.Relists counts it.
func create(ctx context.Context, sess znode.Session, spec Spec) (string, *listed, error) {
	// The path the create sends: a sequential node's without the sequence
	// ZooKeeper appends, or, for a downgrade, with the write node's
	// (Spec.Sequence), which puts the read node at the write node's place
	// in the queue (Curator 5.5's CURATOR-621 fix); that node is then plain
	// ephemeral.
	uuid := NewUUID()
	name := zpath.Join(spec.Dir, ProtectedName(uuid, spec.Prefix)+spec.Sequence)
	flags := int32(zk.FlagEphemeralSequential)
	if spec.Sequence != "" {
		flags = zk.FlagEphemeral
	}
	list := znode.AfterWrite(ctx, sess, name, func(ctx context.Context) listed {
		dir, err := listOurs(ctx, sess, spec, uuid)
		return listed{dir, err}
	})
	var path string
	tried := false
	err := sess.Retry(ctx, func(conn *zk.Conn) error {
		if tried {
			p, err := findOurs(conn, sess, spec.Dir, uuid)
			if err != nil || p != "" {
				path = p
				return err
			}
		}
		tried = true
		p, err := znode.Create(sess, conn, name, flags, spec.Data, spec.top())
		path = p
		return err
	})
	first, ok := list(err)
	if err != nil {
		if tried {
			// We stopped after a create that may have been applied.
			deleteLost(sess, spec.Dir, uuid)
		}
		return "", nil, fmt.Errorf("create node in %s: %w", spec.Dir, err)
	}
	if ok && first.dir.name == zpath.Base(path) {
		return path, &first, nil
	}
	if sent := znode.Of(sess).Sent(); sent != nil {
		sent.Relisted()
	}
	return path, nil, nil
}

// deleteLost finds the node with uuid that a create may have made, and
// deletes it once ZooKeeper can be reached (Curator's CURATOR-45 cleanup),
// in the background.
func deleteLost(sess znode.Session, dir, uuid string) {
	sess.Go(func() {
		_ = sess.Retry(context.Background(), func(conn *zk.Conn) error {
			p, err := findByUUID(conn, dir, uuid)
			if err != nil || p == "" {
				return err
			}
			return znode.IgnoreNoNode(znode.Delete(conn, p))
		})
	})
}

// findOurs looks for the node a lost create reply may have made. A node
// with our UUID that another session owns is not ours to take (Curator's
// CURATOR-498): it is deleted, and the create is made again.
func findOurs(conn *zk.Conn, sess znode.Session, dir, uuid string) (string, error) {
	p, err := findByUUID(conn, dir, uuid)
	if err != nil || p == "" {
		return p, err
	}
	_, st, err := conn.Exists(p)
	switch {
	case err != nil:
		return "", znode.RefusedRead(err, p)
	case st == nil:
		return "", nil
	case st.EphemeralOwner != sess.ID():
		return "", znode.IgnoreNoNode(znode.Delete(conn, p))
	}
	return p, nil
}

// findByUUID looks for the node of our create with uuid. It syncs first: the
// create's reply may have been lost, so the client may now be connected to a
// follower that has not applied it yet, and a listing there would not show it.
func findByUUID(conn *zk.Conn, dir, uuid string) (string, error) {
	if _, err := conn.Sync(dir); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return "", err
	}
	children, _, err := conn.Children(dir)
	if errors.Is(err, zk.ErrNoNode) {
		return "", nil
	}
	if err != nil {
		return "", znode.RefusedRead(err, dir)
	}
	for _, c := range children {
		if UUID(c) == uuid {
			return zpath.Join(dir, c), nil
		}
	}
	return "", nil
}
