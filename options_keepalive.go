package recipes

import "time"

// WithTickTime tells the session the ensemble's tickTime (zoo.cfg's
// tickTime). A follower passes on to the leader that it heard from a client
// only when the leader next pings it, every tickTime/2, so the session needs
// this to know when the leader, which expires sessions, has heard from it;
// see Session. It must be below the session timeout.
//
// Default (or 0): half the session timeout, the largest tickTime of a server
// that grants that timeout with the default minSessionTimeout (2 × tickTime).
// On a server whose minSessionTimeout was lowered below that, give the real
// tickTime, or the loss guarantee does not hold. Giving the real tickTime
// when it is smaller lets a hold ride out longer stalls: the session ends
// when it has had no proof of life for 0.9 × the session timeout while a
// recipe holds, waits or acquires on it, a proof is always at least 0.6 ×
// tickTime old, and a new one comes every tenth of the timeout then. So a
// hold rides out about 0.4 × the timeout without answers from ZooKeeper by
// default (4 s at the default 10 s), and 5.8 s at 10 s with a tickTime of
// 2 s (ZooKeeper's sample configuration): give it whenever you know it.
func WithTickTime(d time.Duration) Option {
	return func(o *options) { o.tick = d }
}

// WithoutIdleProbes stops the keep-alive's probes while nothing is held,
// waited for or being acquired on the session, for fleets of mostly idle
// sessions: an idle session then costs ZooKeeper what a go-zookeeper
// connection costs, its pings.
//
// The price comes at an acquisition that begins more than about 0.4 × the
// session timeout after the session's last probe: it first waits for a new
// proof of life, two syncs answered 0.6 × tickTime apart (see
// WithTickTime), about 0.3 × the session timeout when no tickTime is given
// (3 s at the default 10 s). By default an idle session probes every 3/8 of
// the timeout, which keeps a proof ready, so that an acquisition waits a
// round trip at most while ZooKeeper answers; docs/semantics.md, "Idle
// sessions", has the figures.
func WithoutIdleProbes() Option {
	return func(o *options) { o.noIdleProbes = true }
}
