package bench_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkrecipes/recipes/internal/zkserver"
)

// A relay is a TCP proxy to a server that notes when the server last
// answered a client through it: BenchmarkFailover's leaders reach the
// server through one, so that it knows about when the server last heard
// from a leader it killed. An idle leader sends pings and syncs, which the
// server answers at once; the last answer can come a little after the
// last request (a sync's waits for the writes ahead of it). testenv.Proxy
// does not show pings and syncs.
type relay struct {
	proxy *zkserver.TCPProxy
	heard atomic.Int64 // the Unix nanoseconds of the server's last answer
}

// newRelay starts a relay to target on loopback, closed when b ends.
func newRelay(b *testing.B, target string) *relay {
	b.Helper()
	r := &relay{}
	p, err := zkserver.NewTCPProxy(target, zkserver.WithoutPatience(), zkserver.WithTap(func() zkserver.Tap { return answers{&r.heard} }))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Close() })
	r.proxy = p
	return r
}

// addr returns the address clients dial.
func (r *relay) addr() string { return r.proxy.Addr() }

// lastHeard returns when the server last answered a client.
func (r *relay) lastHeard() time.Time { return time.Unix(0, r.heard.Load()) }

// answers is a relay's tap on one connection.
type answers struct{ last *atomic.Int64 }

func (a answers) See([]byte) bool {
	a.last.Store(time.Now().UnixNano())
	return true
}

func (answers) Closed() {}
