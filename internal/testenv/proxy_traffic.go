package testenv

import "sync/atomic"

// Traffic counts what a proxy forwarded, over all its connections.
type Traffic struct {
	// Requests counts client requests other than pings and syncs:
	// recipes.Session sends a sync every tenth of its session timeout to
	// prove it is alive, which is not the recipes' traffic.
	Requests int64
	// RoundTrips counts the requests among Requests that a client sent
	// while no earlier one of its connection was unanswered: each starts a
	// burst of requests in flight together, which costs the client one
	// round trip to the server. A request is answered once its reply has
	// been passed on to the client. Pings and syncs neither start a burst
	// nor keep one going.
	RoundTrips int64
	// WatchEvents counts watch notifications sent to clients.
	WatchEvents int64
}

// Sub returns the traffic between before and t.
func (t Traffic) Sub(before Traffic) Traffic {
	return Traffic{
		Requests:    t.Requests - before.Requests,
		RoundTrips:  t.RoundTrips - before.RoundTrips,
		WatchEvents: t.WatchEvents - before.WatchEvents,
	}
}

// Add returns the sum of t and o.
func (t Traffic) Add(o Traffic) Traffic {
	return Traffic{
		Requests:    t.Requests + o.Requests,
		RoundTrips:  t.RoundTrips + o.RoundTrips,
		WatchEvents: t.WatchEvents + o.WatchEvents,
	}
}

// Traffic returns the counts so far. A packet is counted before it is
// forwarded: a request by the time its reply can reach the client, a
// notification by the time the client can see it.
func (p *Proxy) Traffic() Traffic {
	return Traffic{
		Requests:    p.requests.Load(),
		RoundTrips:  p.roundTrips.Load(),
		WatchEvents: p.watchEvents.Load(),
	}
}

// Syncs returns how many syncs p has forwarded: the keep-alive probes of a
// recipes.Session, and any sync of the caller's.
func (p *Proxy) Syncs() int64 { return p.syncs.Load() }

// Pending returns how many of the requests counted in Traffic.Requests
// still wait for their reply to be passed back to the client, and how many
// of the notifications counted in Traffic.WatchEvents have not been passed
// to it yet, on connections still open. Both are 0 when nothing is on its
// way to a client but replies to pings and syncs: no client waits for the
// server, and none is about to be woken by it. Without a delay (SetDelay) a
// notification is pending only while the proxy copies it.
func (p *Proxy) Pending() (requests, notifications int64) {
	return p.unanswered.Load(), p.notifying.Load()
}

// Counter returns a function that reports how many client requests, on any
// of p's connections, match(opcode, path) accepted since Counter was called.
// path is as for DropReply; pings and syncs are not offered to match. A
// request is counted when Traffic counts it.
func (p *Proxy) Counter(match func(opcode int32, path string) bool) func() int64 {
	c := &counter{match: match}
	p.mu.Lock()
	p.counters = append(p.counters, c)
	p.mu.Unlock()
	return c.n.Load
}

type counter struct {
	match func(opcode int32, path string) bool
	n     atomic.Int64
}

// sent counts a request frame read from c's client.
func (p *Proxy) sent(c *proxyConn, frame []byte) {
	p.mu.Lock()
	counters := p.counters
	p.mu.Unlock()
	var path string // only the counters look at it
	xid, op, ok := parseHeader(frame)
	if len(counters) > 0 {
		xid, op, path, ok = parseRequest(frame)
	}
	if ok && op == OpSync {
		p.syncs.Add(1)
	}
	if !ok || op == OpPing || op == OpSync {
		return
	}
	p.requests.Add(1)
	c.mu.Lock()
	if len(c.waiting) == 0 {
		p.roundTrips.Add(1)
	}
	if _, dup := c.waiting[xid]; !dup {
		c.waiting[xid] = struct{}{}
		p.unanswered.Add(1)
	}
	c.mu.Unlock()
	for _, k := range counters {
		if k.match(op, path) {
			k.n.Add(1)
		}
	}
}

// received counts a frame read from c's server after its connect response.
func (p *Proxy) received(c *proxyConn, frame []byte) {
	if xid, ok := parseReplyXid(frame); ok && xid == xidNotification {
		p.watchEvents.Add(1)
		p.notifying.Add(1)
		c.mu.Lock()
		c.notifying++
		c.mu.Unlock()
	}
}

// answered marks what a frame from c's server answers, or notifies, as
// delivered, just before the frame is written to c's client.
func (p *Proxy) answered(c *proxyConn, frame []byte) {
	xid, ok := parseReplyXid(frame)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if xid == xidNotification {
		c.notifying--
		p.notifying.Add(-1)
		return
	}
	if _, waited := c.waiting[xid]; waited {
		delete(c.waiting, xid)
		p.unanswered.Add(-1)
	}
}

// forget drops what c, which has closed, left pending.
func (p *Proxy) forget(c *proxyConn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p.unanswered.Add(-int64(len(c.waiting)))
	p.notifying.Add(-c.notifying)
	clear(c.waiting)
	c.notifying = 0
}
