package zktest

import (
	"testing"

	"github.com/zkrecipes/recipes/internal/zkserver"
)

// Proxy stands between clients and servers, one forwarder on loopback for
// each server, so that a test can cut those clients off while others go on:
//
//	p := zktest.NewProxy(t, srv.Servers()...)
//	sess, err := recipes.Connect(ctx, p.Servers())
//	...
//	p.Cut()  // sess hears nothing from now on
//	p.Heal() // and everything held is delivered
//
// Each fault is in force when its call returns. A Proxy is closed when the
// test that made it ends.
type Proxy struct {
	proxies []*zkserver.TCPProxy
}

// NewProxy starts a Proxy to the given servers (host:port each).
func NewProxy(tb testing.TB, servers ...string) *Proxy {
	tb.Helper()
	if len(servers) == 0 {
		tb.Fatal("zktest: NewProxy needs at least one server")
	}
	p := &Proxy{}
	tb.Cleanup(func() {
		for _, q := range p.proxies {
			_ = q.Close()
		}
	})
	for _, s := range servers {
		q, err := zkserver.NewTCPProxy(s, zkserver.WithoutPatience())
		if err != nil {
			tb.Fatalf("zktest: %v", err)
		}
		p.proxies = append(p.proxies, q)
	}
	return p
}

// Servers returns the proxy's addresses, one for each of its servers in
// NewProxy's order: what its clients connect to.
func (p *Proxy) Servers() []string {
	out := make([]string, len(p.proxies))
	for i, q := range p.proxies {
		out[i] = q.Addr()
	}
	return out
}

// Cut partitions the proxy's clients from the servers until Heal, as a
// network would: connections stay open, bytes either way are held, and a
// new connection is accepted but goes no further. The clients see silence,
// so they lose their sessions only when those time out.
func (p *Proxy) Cut() { p.each((*zkserver.TCPProxy).Stall) }

// CutRequests holds what the clients send, until Heal, and lets the
// servers' answers through: a one-way partition. The server hears nothing
// from the clients, so it expires their sessions when they time out, while
// they still hear what was on its way.
func (p *Proxy) CutRequests() { p.each((*zkserver.TCPProxy).StallUp) }

// CutReplies holds what the servers send, until Heal, and lets the clients'
// requests through: the other one-way partition. The server applies what
// the clients ask but they hear no answer, and lose their sessions when
// the client-side timeout passes.
func (p *Proxy) CutReplies() { p.each((*zkserver.TCPProxy).StallDown) }

// Heal ends Cut, CutRequests and CutReplies: what was held is delivered, in
// order, and new connections go through again.
func (p *Proxy) Heal() { p.each((*zkserver.TCPProxy).Restore) }

// Drop closes every connection through the proxy now, as a reset would.
// Clients reconnect through it at once (after Cut, once healed).
func (p *Proxy) Drop() { p.each((*zkserver.TCPProxy).Drop) }

// each applies f to every forwarder of the proxy.
func (p *Proxy) each(f func(*zkserver.TCPProxy)) {
	for _, q := range p.proxies {
		f(q)
	}
}
