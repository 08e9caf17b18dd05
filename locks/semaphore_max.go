package locks

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/znode"
)

// firstUse checks the path's layout, then agrees on the maximum.
func (s *Semaphore) firstUse(ctx context.Context) error {
	if err := s.checkLayout(ctx); err != nil {
		return err
	}
	if s.count != "" {
		s.agreed.Store(&layoutCheck{}) // a shared count is agreed on by its node
		return nil
	}
	return s.agreeMax(ctx)
}

// agreeMax records the maximum in the path's node, or checks it against the
// one recorded there. It runs under the gate, which created the node. A
// record of another maximum stands while a lease is held or an acquirer is
// queued at the gate (their maximum is that one); on an idle semaphore it is
// replaced by ours. Every record is written under the gate, and every
// Semaphore that agreed watches it, so one whose record was replaced agrees
// again on its next acquire, which queues at the gate behind the writer and
// so sees the watch fire first.
func (s *Semaphore) agreeMax(ctx context.Context) error {
	want := maxLeasesPrefix + strconv.Itoa(s.max)
	epoch, counted := s.sess.Disconnects()
	var changed <-chan zk.Event
	err := s.sess.Retry(ctx, func(conn *zk.Conn) error {
		for {
			// A session that cannot count its disconnects agrees on
			// every acquire (below), and go-zookeeper keeps a watch's
			// channel until it fires: no watch then.
			var data []byte
			var st *zk.Stat
			var events <-chan zk.Event
			var err error
			if counted {
				data, st, events, err = conn.GetW(s.at.Dir)
			} else {
				data, st, err = conn.Get(s.at.Dir)
			}
			if err != nil {
				return znode.RefusedRead(err, s.at.Dir)
			}
			recorded, ours := strings.CutPrefix(string(data), maxLeasesPrefix)
			if string(data) == want || (len(data) != 0 && !ours) {
				changed = events // ours, or data not ours to judge
				return nil
			}
			if len(data) != 0 {
				busy, err := s.busy(conn)
				if err != nil {
					return err
				}
				if busy != "" {
					return fmt.Errorf("%w: %s is in use with %s leases (%s), this client says %d",
						ErrMaxLeases, s.at.Path, recorded, busy, s.max)
				}
			}
			// Record ours, then look again: our write fires the watch
			// just set, and a bad version means someone else recorded
			// one meanwhile.
			_, err = znode.Set(conn, s.at.Dir, []byte(want), st.Version)
			if err != nil && !errors.Is(err, zk.ErrBadVersion) {
				return err
			}
		}
	})
	if err != nil {
		return err
	}
	if !counted {
		epoch = -1 // a check that never stands: agree on every acquire
	}
	s.agreed.Store(&layoutCheck{events: changed, epoch: epoch})
	return nil
}

// busy says why the maximum recorded for the semaphore still stands: "held"
// while a lease node exists, "waited for" while an acquirer other than us
// is queued at the gate; "" if neither.
func (s *Semaphore) busy(conn *zk.Conn) (string, error) {
	leases, _, err := conn.Children(s.leases.Dir)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return "", znode.RefusedRead(err, s.leases.Dir)
	}
	if len(leases) > 0 {
		return "held", nil
	}
	gate, _, err := conn.Children(s.gate.Dir)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return "", znode.RefusedRead(err, s.gate.Dir)
	}
	if len(gate) > 1 {
		return "waited for", nil
	}
	return "", nil
}

// stillAgreed reports whether the maximum this Semaphore agreed on still
// stands: it agreed, and the record has not changed (nor been reaped) since.
func (s *Semaphore) stillAgreed() bool {
	c := s.agreed.Load()
	if c == nil {
		return false
	}
	if c.events == nil && c.epoch != -1 {
		return true // a shared count
	}
	return c.stands(s.sess) // never, with epoch -1
}
