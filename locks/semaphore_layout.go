package locks

import (
	"context"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/layout"
	"github.com/zkrecipes/recipes/internal/znode"
)

// checkLayout refuses the path if another kind of recipe uses it. The
// listing leaves a watch on the path's children, shared by every Semaphore
// of the session on that path: until it fires, and while the session has
// lost no connection (after a reconnect, go-zookeeper sets the watch again
// in a request that ours can overtake), nothing was added to the path or
// taken from it, so the next acquisitions take the listing's verdict
// without listing again, a refusal included.
func (s *Semaphore) checkLayout(ctx context.Context) error {
	checks := layoutsOf(s.sess)
	if standing, err := checks.verdict(s.sess, s.at.Dir); standing {
		return err
	}
	epoch, counted := s.sess.Disconnects()
	var names []string
	var events <-chan zk.Event
	err := s.sess.Retry(ctx, func(conn *zk.Conn) error {
		var err error
		names, _, events, err = conn.ChildrenW(s.at.Dir)
		return znode.RefusedRead(err, s.at.Dir)
	})
	if err != nil {
		return fmt.Errorf("list %s: %w", s.at.Path, err)
	}
	err = layout.Check(s.at.Path, names, layout.Semaphore)
	if counted {
		checks.remember(s.sess, s.at.Dir, layoutCheck{events: events, epoch: epoch, err: err})
	}
	return err
}

// A layoutCheck is a listing's verdict on a path, with the watch it left
// and the session's Disconnects before it was sent.
type layoutCheck struct {
	events <-chan zk.Event
	epoch  int64
	err    error
}

// stands reports whether the check still stands for sess: its watch has not
// fired and no connection was lost since.
func (c layoutCheck) stands(sess *recipes.Session) bool {
	select {
	case <-c.events:
		return false
	default:
	}
	n, _ := sess.Disconnects()
	return n == c.epoch
}

// layoutChecks are a session's checks that still stand, or may, by
// semaphore path. Each check that lists sweeps out those that no longer do,
// so there is at most one for each path.
type layoutChecks struct {
	sync.Mutex
	m map[string]layoutCheck
}

// layoutsKey keeps a session's layoutChecks in its state.
type layoutsKey struct{}

// layoutsOf returns sess's layout checks.
func layoutsOf(sess *recipes.Session) *layoutChecks {
	return znode.Of(sess).State().Value(layoutsKey{}, func() any {
		return &layoutChecks{m: map[string]layoutCheck{}}
	}).(*layoutChecks)
}

// verdict reports whether the session's last check of the path dir still
// stands, and its verdict.
func (c *layoutChecks) verdict(sess *recipes.Session, dir string) (standing bool, err error) {
	c.Lock()
	defer c.Unlock()
	check, found := c.m[dir]
	if !found || !check.stands(sess) {
		delete(c.m, dir)
		return false, nil
	}
	return true, check.err
}

// remember keeps a check's verdict and watch.
func (c *layoutChecks) remember(sess *recipes.Session, dir string, check layoutCheck) {
	c.Lock()
	defer c.Unlock()
	for other, oc := range c.m {
		if !oc.stands(sess) {
			delete(c.m, other)
		}
	}
	c.m[dir] = check
}
