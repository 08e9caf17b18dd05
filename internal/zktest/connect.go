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
	// DefaultSessionTimeout is the session timeout used by Connect.
	DefaultSessionTimeout = 10 * time.Second
	// sessionWait bounds how long Connect waits for a session.
	sessionWait = 10 * time.Second
)

// Connect opens a go-zookeeper connection to servers, waits up to 10s for a
// session and registers a cleanup that closes the connection and waits for
// its goroutines to finish. The client's log output is captured and printed
// only if the test fails. opts are go-zookeeper options such as
// zk.WithDialer(proxy.Dialer); do not pass zk.WithEventCallback or
// zk.WithLogger, which Connect installs itself.
func Connect(t testing.TB, servers []string, opts ...func(*zk.Conn)) *zk.Conn {
	t.Helper()
	conn, _ := ConnectSession(t, servers, DefaultSessionTimeout, opts...)
	return conn
}

// ConnectSession is Connect with an explicit session timeout. It also
// returns an EventLog of the connection's events, positioned after the
// event that announced the session.
func ConnectSession(t testing.TB, servers []string, sessionTimeout time.Duration, opts ...func(*zk.Conn)) (*zk.Conn, *EventLog) {
	t.Helper()
	events := newEventLog()
	logger := &bufferLogger{}
	all := func(c *zk.Conn) {
		// Before opts, so that a dialer given there (a proxy's) wins.
		zk.WithDialer(handshakeDialer(sessionTimeout / 4))(c)
		for _, o := range opts {
			o(c)
		}
		zk.WithLogger(logger)(c)
		zk.WithEventCallback(events.record)(c)
	}
	conn, ch, err := zk.Connect(servers, sessionTimeout, all)
	if err != nil {
		t.Fatalf("zktest: zk.Connect(%v): %v", servers, err)
	}
	t.Cleanup(func() {
		conn.Close()
		// The event channel is closed when the connection's main loop
		// returns; wait for that so no client goroutine outlives the test.
		timeout := time.After(10 * time.Second)
	drain:
		for {
			select {
			case _, ok := <-ch:
				if !ok {
					break drain
				}
			case <-timeout:
				t.Errorf("zktest: zk connection to %v did not shut down within 10s", servers)
				break drain
			}
		}
		if lines := logger.stop(); t.Failed() && len(lines) > 0 {
			t.Logf("zk client log:\n%s", strings.Join(lines, "\n"))
		}
	})
	if _, err := events.WaitState(zk.StateHasSession, sessionWait); err != nil {
		t.Fatalf("zktest: no session with %v: %v", servers, err)
	}
	return conn, events
}

// EventLog records every event of a connection without ever dropping one
// (unlike go-zookeeper's event channel, which discards events when its small
// buffer is full). Waiters consume events in order from a shared cursor.
type EventLog struct {
	mu     sync.Mutex
	events []zk.Event
	next   int           // index of the next event to consume
	notify chan struct{} // closed and replaced whenever an event arrives
}

func newEventLog() *EventLog {
	return &EventLog{notify: make(chan struct{})}
}

func (l *EventLog) record(ev zk.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, ev)
	close(l.notify)
	l.notify = make(chan struct{})
}

// All returns a copy of every event recorded so far.
func (l *EventLog) All() []zk.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]zk.Event(nil), l.events...)
}

// Wait consumes events until one satisfies match and returns it, or returns
// an error after timeout. Events consumed while waiting are not seen again.
func (l *EventLog) Wait(match func(zk.Event) bool, timeout time.Duration) (zk.Event, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		l.mu.Lock()
		for l.next < len(l.events) {
			ev := l.events[l.next]
			l.next++
			if match(ev) {
				l.mu.Unlock()
				return ev, nil
			}
		}
		notify := l.notify
		l.mu.Unlock()
		select {
		case <-notify:
		case <-deadline.C:
			return zk.Event{}, fmt.Errorf("no matching event within %v", timeout)
		}
	}
}

// WaitState consumes events until a session event with the given state.
func (l *EventLog) WaitState(state zk.State, timeout time.Duration) (zk.Event, error) {
	ev, err := l.Wait(func(ev zk.Event) bool {
		return ev.Type == zk.EventSession && ev.State == state
	}, timeout)
	if err != nil {
		return ev, fmt.Errorf("waiting for %v: %w", state, err)
	}
	return ev, nil
}

// WaitStateT is WaitState that fails t on timeout.
func (l *EventLog) WaitStateT(t testing.TB, state zk.State, timeout time.Duration) zk.Event {
	t.Helper()
	ev, err := l.WaitState(state, timeout)
	if err != nil {
		t.Fatalf("zktest: %v", err)
	}
	return ev
}

// bufferLogger is a zk.Logger that keeps lines in memory until stopped.
type bufferLogger struct {
	mu      sync.Mutex
	lines   []string
	stopped bool
}

// Printf implements zk.Logger.
func (b *bufferLogger) Printf(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.stopped {
		b.lines = append(b.lines, time.Now().Format("15:04:05.000 ")+fmt.Sprintf(format, args...))
	}
}

func (b *bufferLogger) stop() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopped = true
	return b.lines
}
