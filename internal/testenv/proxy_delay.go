package testenv

import (
	"net"
	"time"
)

// SetDelay makes every connection the proxy accepts from now on carry each
// packet, in each direction, no sooner than d after the proxy read it whole,
// as a network with a one-way latency of d would: packets keep their order,
// and those in flight together overlap instead of waiting for each other, so
// a client that sends several requests at once pays d each way once. 0, the
// default, forwards at once. Connections already open keep the delay they
// were accepted with.
//
// The delay is added after a stall lets a packet through: packets already
// in flight when a stall begins are delivered, as on a real network. The
// delay is a floor: the time a thread takes to wake (tens of microseconds
// on Linux, where the proxy sleeps in nanosleep(2) rather than on the Go
// runtime's timers, which round waits under a millisecond up to one when
// the process is otherwise idle) comes on top.
func (p *Proxy) SetDelay(d time.Duration) { p.delay.Store(int64(max(d, 0))) }

// delayLineLength bounds the packets one direction of a connection holds in
// flight; a reader that finds the line full waits, as a sender with a full
// window would.
const delayLineLength = 256

// A delayLine writes the packets given to send, in order, each once its
// delay after send has passed. Its writer goroutine is joined by close.
type delayLine struct {
	delay   time.Duration
	queue   chan delayed
	stopped chan struct{} // closed when the writer has returned
}

type delayed struct {
	frame []byte
	first bool
	due   time.Time
}

// newDelayLine starts a line that passes each packet to write after delay.
func newDelayLine(delay time.Duration, write func(frame []byte, first bool) error) *delayLine {
	l := &delayLine{delay: delay, queue: make(chan delayed, delayLineLength), stopped: make(chan struct{})}
	go l.run(write)
	return l
}

// send queues frame. It fails once a write has failed.
func (l *delayLine) send(frame []byte, first bool) error {
	select {
	case l.queue <- delayed{frame: frame, first: first, due: time.Now().Add(l.delay)}:
		return nil
	case <-l.stopped:
		return net.ErrClosed
	}
}

// close waits until every packet queued has been written, or a write has
// failed. send must not be called after it.
func (l *delayLine) close() {
	close(l.queue)
	<-l.stopped
}

func (l *delayLine) run(write func(frame []byte, first bool) error) {
	defer close(l.stopped)
	for d := range l.queue {
		if wait := time.Until(d.due); wait > 0 {
			sleep(wait)
		}
		if err := write(d.frame, d.first); err != nil {
			return
		}
	}
}
