package zktest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

const (
	// SessionTimeout is the session timeout Connect asks for.
	SessionTimeout = 10 * time.Second
	// sessionWait bounds how long Connect waits for a session, and its
	// cleanup for the connection to shut down.
	sessionWait = 10 * time.Second
)

// Connect opens a go-zookeeper connection to servers with SessionTimeout
// and waits for its session: ConnectWithTimeout.
func Connect(tb testing.TB, servers []string, opts ...func(*zk.Conn)) *zk.Conn {
	tb.Helper()
	return ConnectWithTimeout(tb, servers, SessionTimeout, opts...)
}

// ConnectWithTimeout opens a go-zookeeper connection to servers, asking for
// the session timeout given, and waits for its session; the connection is
// closed, and its goroutines waited for, when tb's test ends. The client's
// log is shown only if the test fails. opts are go-zookeeper's options
// (zk.WithDialer, zk.WithEventCallback, ...); the logger is Connect's own.
//
// A connection that a server accepts but does not answer within a quarter
// of the timeout is closed, so that the client tries again: ZooKeeper
// 3.8.0 accepts connections while it loads its data after a restart and may
// never answer them (ZOOKEEPER-5051). A dialer among opts replaces that.
func ConnectWithTimeout(tb testing.TB, servers []string, timeout time.Duration, opts ...func(*zk.Conn)) *zk.Conn {
	tb.Helper()
	logger := &bufferLogger{}
	socks := &sockets{bound: timeout / 4}
	all := func(c *zk.Conn) {
		zk.WithDialer(socks.dial)(c)
		for _, o := range opts {
			o(c)
		}
		zk.WithLogger(logger)(c)
	}
	conn, events, err := zk.Connect(servers, timeout, all)
	if err != nil {
		tb.Fatalf("zktest: zk.Connect(%s): %v", describe(servers), err)
	}
	tb.Cleanup(func() {
		conn.Close() // sends the session's close, and waits for up to a second
		socks.closeLast()
		// The event channel is closed when the connection's main loop
		// returns: no client goroutine outlives the test.
		if !drain(events) {
			tb.Errorf("zktest: the connection to %s did not shut down within %v", describe(servers), sessionWait)
		}
		if lines := logger.stop(); tb.Failed() && len(lines) > 0 {
			tb.Logf("zk client log:\n%s", strings.Join(lines, "\n"))
		}
	})
	deadline := time.After(sessionWait)
	for {
		select {
		case ev, ok := <-events:
			switch {
			case !ok:
				tb.Fatalf("zktest: the connection to %s closed before it had a session", describe(servers))
			case ev.State == zk.StateHasSession:
				return conn
			}
		case <-deadline:
			tb.Fatalf("zktest: no session with %s within %v", describe(servers), sessionWait)
		}
	}
}

// drain reads events until the channel is closed, for up to sessionWait,
// and says whether it was.
func drain(events <-chan zk.Event) bool {
	deadline := time.After(sessionWait)
	for {
		select {
		case _, ok := <-events:
			if !ok {
				return true
			}
		case <-deadline:
			return false
		}
	}
}

// bufferLogger keeps a client's log lines until the test ends.
type bufferLogger struct {
	mu      sync.Mutex
	lines   []string
	stopped bool
}

func (b *bufferLogger) Printf(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.stopped {
		b.lines = append(b.lines, time.Now().Format("15:04:05.000 ")+fmt.Sprintf(format, args...))
	}
}

// stop returns the lines and keeps no more: the client may log after the
// test has ended.
func (b *bufferLogger) stop() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopped = true
	return b.lines
}
