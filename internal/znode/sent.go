package znode

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/zkrecipes/recipes/internal/jute"
)

// Sent tells when a create or delete request is being written to a
// session's connection. A request queued after that goes out after it on
// that connection, and ZooKeeper serves one session's requests in order:
// so a read sent then is answered after the create is applied, in the same
// round trip (seqnode's create), and, while the connection holds, a
// semaphore's next acquisition on the session finds its gate's delete
// applied without the last one having waited for the answer.
type Sent struct {
	relists atomic.Int64 // see Relists
	waiters atomic.Int32 // len(waiting): Written reads packets only while someone waits
	mu      sync.Mutex
	waiting map[string]chan struct{}
}

// Wait returns a channel that is closed once a create or delete of path
// (the path sent: a sequential node's create without its sequence) is
// being written, and the func that stops waiting. One wait per path at a
// time.
func (s *Sent) Wait(path string) (written <-chan struct{}, stop func()) {
	ch := s.wait(path)
	return ch, func() { s.done(path, ch, false) }
}

// wait is Wait's channel; done(path, ch, false) stops the wait.
func (s *Sent) wait(path string) chan struct{} {
	ch := make(chan struct{})
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waiting == nil {
		s.waiting = map[string]chan struct{}{}
	}
	s.waiting[path] = ch
	s.waiters.Add(1)
	return ch
}

// Written is given every packet the session writes to its connection,
// just before it is written, by the one goroutine that writes them: a
// request queued after Written has seen a write goes out after it on that
// connection, or, if that write fails, on a later one, where a listing may
// not show the create (seqnode's create checks).
func (s *Sent) Written(packet []byte) {
	if s.waiters.Load() == 0 {
		return
	}
	path, ok := jute.WritePath(packet)
	if !ok {
		return
	}
	s.mu.Lock()
	ch := s.waiting[path]
	s.mu.Unlock()
	if ch != nil {
		s.done(path, ch, true)
	}
}

// done stops the wait of ch for path, closing ch if written.
func (s *Sent) done(path string, ch chan struct{}, written bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waiting[path] != ch {
		return
	}
	delete(s.waiting, path)
	s.waiters.Add(-1)
	if written {
		close(ch)
	}
}

// Relisted counts a create whose listing could not go with it.
func (s *Sent) Relisted() { s.relists.Add(1) }

// Relists returns how many creates of this session so far had to be
// listed again after them, rather than in their round trip (Relisted).
func (s *Sent) Relists() int64 { return s.relists.Load() }

// AfterWrite runs read in the round trip of a create or delete of path
// that the caller is about to send on sess: read starts once that request
// is being written to the session's connection (Sent), so its own
// requests go out after it, and ZooKeeper serves them after it. Call the
// func it returns, always, once the write has returned, with the write's
// error: it returns read's result, and false if read did not run after the
// write (the session's writes are not seen, the request was never
// written) or the write failed. A read that starts before the write was
// applied (the connection changed in between) may not show it: the caller
// checks that it does.
func AfterWrite[T any](ctx context.Context, sess Session, path string, read func(context.Context) T) (done func(writeErr error) (T, bool)) {
	sent := Of(sess).Sent()
	if sent == nil {
		return func(error) (T, bool) {
			var zero T
			return zero, false
		}
	}
	written := sent.wait(path)
	returned := make(chan struct{})
	type result struct {
		v  T
		ok bool
	}
	out := make(chan result, 1)
	rctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-written:
		case <-returned:
			// The write has returned: it was written, unless it never
			// was (it failed before, or the connection changed).
		}
		select {
		case <-written:
			out <- result{read(rctx), true}
		default:
			out <- result{}
		}
	}()
	return func(err error) (T, bool) {
		sent.done(path, written, false)
		if err != nil {
			cancel() // a failed write does not wait for its read to get past a reconnect
		}
		close(returned)
		r := <-out
		cancel()
		return r.v, r.ok && err == nil
	}
}
