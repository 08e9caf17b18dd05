package recipes

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/znode"
)

// handshakeBound is how long Connect gives a server to answer a connection
// attempt, for the session timeout t: from the start of the dial to the last
// byte of ZooKeeper's connect response, TLS handshake included. A server that
// has not answered by then is given up on, and go-zookeeper tries the next.
//
// go-zookeeper alone waits ten times two thirds of the session timeout for
// the connect response (its read deadline), far past the loss deadline.
// ZooKeeper 3.8.0 accepts connections while it loads its database at startup
// and never answers a connect request that lands then (ZOOKEEPER-5051), so a
// holder whose reconnect met a restarting server would lose a session that
// another server could have kept. A session rides out at least 0.4 × t
// without answers (docs/semantics.md), so after a tenth of t on each silent
// server a reconnect can skip three of them and still have a tenth of t left
// for a live one. A live server answers a connect request within a few
// round trips (to it, from a follower to the leader, and for a new session
// the quorum's acknowledgement of a write): far less than t/10, which is a
// second at the default timeout.
//
// Until the session exists, there is no session to keep, and creating one
// is a write that waits for the quorum's disks: the first connection is
// given a third of the connect timeout instead, if that is longer, so that
// Connect still reaches a server whose disk is slow to sync.
func handshakeBound(t time.Duration) time.Duration { return t / 10 }

// firstHandshakeBound is the bound of an attempt made before the session
// exists, for the session timeout t and Connect's connect timeout.
func firstHandshakeBound(t, connect time.Duration) time.Duration {
	return max(handshakeBound(t), connect/3)
}

// dialer is the zk.Dialer that Connect gives go-zookeeper: dial, bounded by
// handshakeBound for the session timeout in force, with each connection
// wrapped in a grantConn that watches its handshake and kept as the
// session's socket (see settle). The reason the last attempt failed goes to
// lastErr.
func (s *Session) dialer(dial zk.Dialer, lastErr *atomic.Pointer[error]) zk.Dialer {
	return func(network, addr string, timeout time.Duration) (net.Conn, error) {
		bound := handshakeBound(s.timeout())
		if s.grantedMs.Load() == 0 {
			bound = firstHandshakeBound(s.timeout(), s.opts.connectTimeout)
		}
		deadline := time.Now().Add(bound)
		c, err := dial(network, addr, min(timeout, bound))
		if err != nil {
			lastErr.Store(&err)
			return nil, err
		}
		now := time.Now()
		s.dialled.Store(&now)
		g := newGrantConn(c, &s.grantedMs, znode.Of(s).Sent())
		g.watch(time.Until(deadline), func() {
			err := fmt.Errorf("%s accepted the connection but did not answer it within %v", addr, bound)
			lastErr.Store(&err)
			znode.Of(s).Recorder().Logger().LogAttrs(context.Background(), slog.LevelWarn, "zookeeper server did not answer",
				slog.String("server", addr), slog.Duration("within", bound))
		})
		s.socket.Store(g) // after watch, which sets what Close reads
		return g, nil
	}
}
