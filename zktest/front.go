package zktest

import (
	"encoding/binary"
	"fmt"
	"sync"

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
	for _, s := range servers {
		p, err := zkserver.NewTCPProxy(s, zkserver.WithoutPatience(), zkserver.WithTap(f.newTap))
		if err != nil {
			f.close()
			return nil, fmt.Errorf("forwarder to %s: %w", s, err)
		}
		f.proxies = append(f.proxies, p)
	}
	return f, nil
}

func (f *front) addr(i int) string { return f.proxies[i].Addr() }

func (f *front) close() {
	for _, p := range f.proxies {
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

// newTap returns the function that reads one connection's first packet
// from the server, given as it is forwarded, and records its session if it
// is a connect response that grants one. Anything else (a four-letter
// word's answer) ends the reading.
func (f *front) newTap() func([]byte) bool {
	var head []byte
	return func(b []byte) bool {
		head = append(head, b...)
		if len(head) < 4 {
			return true
		}
		n := 4 + int(binary.BigEndian.Uint32(head))
		if n < connectResponseMin || n > connectResponseMax {
			return false
		}
		if len(head) < n {
			return true
		}
		timeout := int32(binary.BigEndian.Uint32(head[8:]))
		id := int64(binary.BigEndian.Uint64(head[12:]))
		plen := int(int32(binary.BigEndian.Uint32(head[20:])))
		if timeout > 0 && id != 0 && plen >= 0 && 24+plen <= n {
			sessions.learn(id, session{passwd: append([]byte(nil), head[24:24+plen]...), front: f})
		}
		return false
	}
}

// session is what ExpireSession needs of a session: its password and where
// to find its servers.
type session struct {
	passwd []byte
	front  *front
}

// sessions are those that connected through a front that is still open.
var sessions = registry{m: map[int64]session{}}

type registry struct {
	mu sync.Mutex
	m  map[int64]session
}

func (r *registry) learn(id int64, s session) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m[id] = s
}

func (r *registry) lookup(id int64) (session, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.m[id]
	return s, ok
}

func (r *registry) forget(f *front) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, s := range r.m {
		if s.front == f {
			delete(r.m, id)
		}
	}
}
