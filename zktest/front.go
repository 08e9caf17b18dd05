package zktest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zkrecipes/recipes/internal/zkserver"
)

// A front is the forwarder in front of a server or of each member of an
// ensemble: the addresses this package hands out. It forwards every byte
// as it comes and reads, on the side, the connect response that opens each
// connection, to learn the session's id and password (see sessions).
type front struct {
	servers []string // the real addresses, in members' order
	proxies []*zkserver.TCPProxy
}

func newFront(servers []string) (*front, error) {
	f := &front{servers: servers}
	for i, s := range servers {
		p, err := zkserver.NewTCPProxy(s, zkserver.WithoutPatience(),
			zkserver.WithTap(func() zkserver.Tap { return &tap{front: f, member: i} }))
		if err != nil {
			f.close()
			return nil, fmt.Errorf("forwarder to %s: %w", s, err)
		}
		f.proxies = append(f.proxies, p)
		fronted.Store(p.Addr(), s)
	}
	return f, nil
}

func (f *front) addr(i int) string { return f.proxies[i].Addr() }

// describe names servers for a message: a front's address with the server
// it forwards to.
func describe(servers []string) string {
	out := make([]string, len(servers))
	for i, s := range servers {
		out[i] = s
		if t, ok := fronted.Load(s); ok {
			out[i] = fmt.Sprintf("%s (forwarding to %s)", s, t)
		}
	}
	return strings.Join(out, ", ")
}

// fronted maps each open front's address to the server it forwards to.
var fronted sync.Map

func (f *front) close() {
	for _, p := range f.proxies {
		fronted.Delete(p.Addr())
		_ = p.Close()
	}
	sessions.forget(f)
}

// Connect responses are short: their length, the protocol version, the
// timeout, the session id, the password (a length and 16 bytes) and a
// read-only flag.
const (
	connectResponseMin = 4 + 4 + 4 + 8 + 4
	connectResponseMax = 256
)

// A tap reads the first packet the server sends on one connection through
// a front, as it is forwarded, and records its session if it is a connect
// response that grants one; anything else (a four-letter word's answer)
// ends the reading. It tells the registry when the connection closes.
type tap struct {
	front  *front
	member int
	head   []byte
	id     int64 // the session granted; 0: none
}

func (t *tap) See(b []byte) bool {
	t.head = append(t.head, b...)
	if len(t.head) < 4 {
		return true
	}
	n := 4 + int(binary.BigEndian.Uint32(t.head))
	if n < connectResponseMin || n > connectResponseMax {
		return false
	}
	if len(t.head) < n {
		return true
	}
	timeout := int32(binary.BigEndian.Uint32(t.head[8:]))
	id := int64(binary.BigEndian.Uint64(t.head[12:]))
	plen := int(int32(binary.BigEndian.Uint32(t.head[20:])))
	if timeout > 0 && id != 0 && plen >= 0 && 24+plen <= n {
		t.id = id
		sessions.opened(id, t.head[24:24+plen], time.Duration(timeout)*time.Millisecond, t.front, t.member)
	}
	return false
}

func (t *tap) Closed() {
	if t.id != 0 {
		sessions.closed(t.id, t.front, t.member)
	}
}

// session is what ExpireSession needs of a session that connected through
// one front: its password, its timeout and where its connections are.
type session struct {
	passwd  []byte
	timeout time.Duration
	front   *front
	live    map[int]int // member: connections open now
	learned uint64      // when, in the order the registry learned them
}

// liveMember returns a member that carries a connection of the session
// now.
func (s *session) liveMember() (int, bool) {
	for m, n := range s.live {
		if n > 0 {
			return m, true
		}
	}
	return 0, false
}

// sessions are those that connected through a front that is still open.
// Two servers can grant the same session id and password: ZooKeeper draws
// both from the server's id and the millisecond its session tracker
// started, and every standalone server's id is 1. So an id may be known
// through more than one front.
var sessions = registry{m: map[int64][]*session{}, changed: make(chan struct{})}

type registry struct {
	mu      sync.Mutex
	m       map[int64][]*session
	learned uint64
	changed chan struct{} // closed, and replaced, when a connection closes
}

func (r *registry) find(id int64, f *front) *session {
	for _, s := range r.m[id] {
		if s.front == f {
			return s
		}
	}
	return nil
}

func (r *registry) opened(id int64, passwd []byte, timeout time.Duration, f *front, member int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.learned++
	s := r.find(id, f)
	if s == nil {
		s = &session{front: f, live: map[int]int{}}
		r.m[id] = append(r.m[id], s)
	}
	s.passwd, s.timeout, s.learned = append([]byte(nil), passwd...), timeout, r.learned
	s.live[member]++
}

func (r *registry) closed(id int64, f *front, member int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.find(id, f); s != nil {
		s.live[member]--
	}
	close(r.changed)
	r.changed = make(chan struct{})
}

// lookup returns the session with the given id: the one known through a
// single front, else the one with a connection open now, else the one
// learned last; an id with connections open through two fronts is
// ambiguous.
func (r *registry) lookup(id int64) (session, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	all := r.m[id]
	if len(all) == 0 {
		return session{}, errors.New("it did not connect through an address of this package's " +
			"(Server.Servers, Ensemble.Servers, Servers), or that server is gone")
	}
	var live []*session
	last := all[0]
	for _, s := range all {
		if _, ok := s.liveMember(); ok {
			live = append(live, s)
		}
		if s.learned > last.learned {
			last = s
		}
	}
	switch len(live) {
	case 0:
		return copySession(last), nil
	case 1:
		return copySession(live[0]), nil
	}
	return session{}, errors.New("two servers of this test binary granted that id, and clients are connected to both")
}

func copySession(s *session) session {
	c := *s
	c.live = maps.Clone(s.live)
	return c
}

// member returns a member of the front that carries a connection of the
// session id now.
func (r *registry) member(id int64, f *front) (int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.find(id, f); s != nil {
		return s.liveMember()
	}
	return 0, false
}

// abandoned reports whether the session id is known, through some front,
// and no connection of it is open through any: its client has gone (closed,
// or cut off by a Proxy that closed) without the server having ended the
// session yet. A front learns of a close when its forwarding reads the end
// of the stream, a moment after the client's side closed; abandoned waits
// up to within for that.
func (r *registry) abandoned(id int64, within time.Duration) bool {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		all, changed := r.m[id], r.changed
		live := slices.ContainsFunc(all, func(s *session) bool {
			_, ok := s.liveMember()
			return ok
		})
		r.mu.Unlock()
		if len(all) == 0 || !live {
			return len(all) > 0
		}
		select {
		case <-changed:
		case <-deadline.C:
			return false
		}
	}
}

func (r *registry) forget(f *front) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, all := range r.m {
		all = slices.DeleteFunc(all, func(s *session) bool { return s.front == f })
		if len(all) == 0 {
			delete(r.m, id)
		} else {
			r.m[id] = all
		}
	}
}
