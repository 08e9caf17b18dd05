package testenv

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zkrecipes/recipes/zktest"

	"github.com/go-zookeeper/zk"
)

// DefaultSessionTimeout is the session timeout of zktest.Connect.
const DefaultSessionTimeout = zktest.SessionTimeout

// ConnectSession is zktest.ConnectWithTimeout that also returns an EventLog
// of the connection's events, positioned after the event that announced
// the session.
func ConnectSession(t testing.TB, servers []string, sessionTimeout time.Duration, opts ...func(*zk.Conn)) (*zk.Conn, *EventLog) {
	t.Helper()
	events := newEventLog()
	conn := zktest.ConnectWithTimeout(t, servers, sessionTimeout, append(opts, zk.WithEventCallback(events.record))...)
	if _, err := events.WaitState(zk.StateHasSession, sessionTimeout); err != nil {
		t.Fatalf("testenv: no session event from %v: %v", servers, err)
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
		t.Fatalf("testenv: %v", err)
	}
	return ev
}
