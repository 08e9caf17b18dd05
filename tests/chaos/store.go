package chaos

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Store is the resource that holders protect: a key-value store on
// loopback that checks fencing tokens, as a database a service writes to
// would. Every operation carries the token of the hold it is made under.
// Each key has two tokens: the fence, the greatest of its accepted writes
// and fenced reads (a section's first access), and the token of its last
// write. A write is refused under a token below the fence, a read under
// one below the last write's: readers of an RWMutex, which hold together,
// fence the writers they succeed without refusing each other. Without the
// check (NewStore(false), the negative control) it accepts everything.
//
// Workers reach it over TCP, one connection per loop, in lines of ASCII:
//
//	R <pid> <op> <key> <token> <fence 0|1>                     -> OK <value> | NO
//	W <pid> <op> <key> <token> <value> <basis> <excl 0|1>      -> OK | NO
//
// Keys, values and bases are single words; a key's first value is
// InitialValue. <pid> and <op> name the operation in the timeline: the
// store keeps what it did with each (see Applied), so that an operation
// whose worker was killed before it logged the answer is still known.
type Store struct {
	ln    net.Listener
	check bool

	mu      sync.Mutex
	keys    map[string]*cell
	applied map[opID]Event
	conns   map[net.Conn]bool
	closed  bool
	wg      sync.WaitGroup
}

// InitialValue is every key's value before its first write.
const InitialValue = "-"

type cell struct {
	fence   int64 // the greatest token of an accepted write or fenced read
	written int64 // the last accepted write's token
	value   string
}

type opID struct {
	pid int
	op  int64
}

// NewStore starts a store on 127.0.0.1; check says whether it checks
// tokens.
func NewStore(check bool) (*Store, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("chaos: store: %w", err)
	}
	s := &Store{ln: ln, check: check, keys: map[string]*cell{}, applied: map[opID]Event{}, conns: map[net.Conn]bool{}}
	s.wg.Go(s.accept)
	return s, nil
}

// Addr returns the store's address.
func (s *Store) Addr() string { return s.ln.Addr().String() }

// Close stops the store and waits for its connections to end.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	err := s.ln.Close()
	s.wg.Wait()
	return err
}

// Reset empties the store, and forgets what it did: a new run on it
// starts from every key's InitialValue and no token, as Linearize's model
// does. No operation may be under way.
func (s *Store) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = map[string]*cell{}
	s.applied = map[opID]Event{}
}

// Applied returns, and forgets, what the store did with every operation
// since the last call, as the events a worker would have logged for them,
// stamped with the time the store answered (Begin too: the store does not
// know when they were sent).
func (s *Store) Applied() map[int]map[int64]Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[int]map[int64]Event{}
	for id, ev := range s.applied {
		if out[id.pid] == nil {
			out[id.pid] = map[int64]Event{}
		}
		out[id.pid][id.op] = ev
	}
	s.applied = map[opID]Event{}
	return out
}

func (s *Store) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = c.Close()
			return
		}
		s.conns[c] = true
		s.mu.Unlock()
		s.wg.Go(func() { s.serve(c) })
	}
}

func (s *Store) serve(c net.Conn) {
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		_ = c.Close()
	}()
	in := bufio.NewReader(c)
	out := bufio.NewWriter(c)
	for {
		line, err := in.ReadString('\n')
		if err != nil {
			return
		}
		if _, err := out.WriteString(s.do(strings.TrimSuffix(line, "\n")) + "\n"); err != nil {
			return
		}
		if in.Buffered() == 0 { // answer a pipeline's last request at once
			if err := out.Flush(); err != nil {
				return
			}
		}
	}
}

// errStoreRequest is a request the store cannot parse.
var errStoreRequest = errors.New("bad store request")

// do carries out one request line and returns the reply line.
func (s *Store) do(line string) string {
	ev, err := parseRequest(line)
	if err != nil {
		return "ERR " + err.Error()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.keys[ev.Paths[0]]
	if k == nil {
		k = &cell{value: InitialValue}
		s.keys[ev.Paths[0]] = k
	}
	switch {
	case ev.Type == EvStoreRead:
		if ev.OK = !s.check || ev.Token >= k.written; ev.OK {
			ev.Value = k.value
			if ev.Fence && s.check {
				k.fence = max(k.fence, ev.Token)
			}
		}
	default:
		if ev.OK = !s.check || ev.Token >= k.fence; ev.OK {
			k.value = ev.Value
			if s.check {
				k.fence, k.written = ev.Token, ev.Token
			}
		}
	}
	ev.Time = time.Now().UnixNano()
	ev.Begin = ev.Time
	s.applied[opID{ev.Pid, ev.Op}] = ev
	switch {
	case !ev.OK:
		return "NO"
	case ev.Type == EvStoreRead:
		return "OK " + ev.Value
	}
	return "OK"
}

// parseRequest reads a request line into the event its answer completes.
func parseRequest(line string) (Event, error) {
	f := strings.Fields(line)
	bad := func(why string) (Event, error) {
		return Event{}, fmt.Errorf("%w %q: %s", errStoreRequest, line, why)
	}
	if len(f) < 6 {
		return bad("too few fields")
	}
	var ev Event
	var errs [3]error
	ev.Pid, errs[0] = strconv.Atoi(f[1])
	ev.Op, errs[1] = strconv.ParseInt(f[2], 10, 64)
	ev.Paths = []string{f[3]}
	ev.Token, errs[2] = strconv.ParseInt(f[4], 10, 64)
	if err := errors.Join(errs[:]...); err != nil {
		return bad(err.Error())
	}
	switch {
	case f[0] == "R" && len(f) == 6 && (f[5] == "0" || f[5] == "1"):
		ev.Type, ev.Fence = EvStoreRead, f[5] == "1"
	case f[0] == "W" && len(f) == 8 && (f[7] == "0" || f[7] == "1"):
		ev.Type, ev.Value, ev.Basis, ev.Excl = EvStoreWrite, f[5], f[6], f[7] == "1"
	default:
		return bad("want R pid op key token fence, or W pid op key token value basis excl")
	}
	return ev, nil
}

// StoreClient is one connection to a Store; it is not safe for concurrent
// use: each loop of a worker has its own.
type StoreClient struct {
	c   net.Conn
	in  *bufio.Reader
	pid int
	ops *int64 // the process's operation ids, shared by its clients
	mu  *sync.Mutex
}

// DialStore connects to the store at addr as process pid; ops and mu are
// the process's operation counter and the lock that guards it.
func DialStore(addr string, pid int, ops *int64, mu *sync.Mutex) (*StoreClient, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("chaos: store: %w", err)
	}
	return &StoreClient{c: c, in: bufio.NewReader(c), pid: pid, ops: ops, mu: mu}, nil
}

// Close closes the connection.
func (c *StoreClient) Close() error { return c.c.Close() }

func (c *StoreClient) nextOp() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	*c.ops++
	return *c.ops
}

// Read reads key under token, fenced or not, and returns the event to log:
// OK and Value set, Begin the time it was sent, Time when it returned.
func (c *StoreClient) Read(key string, token int64, fence bool) (Event, error) {
	ev := Event{Type: EvStoreRead, Pid: c.pid, Op: c.nextOp(), Paths: []string{key}, Token: token, Fence: fence}
	reply, err := c.call(&ev, fmt.Sprintf("R %d %d %s %d %d", c.pid, ev.Op, key, token, bit(fence)))
	if err != nil {
		return ev, err
	}
	if ev.Value, ev.OK = strings.CutPrefix(reply, "OK "); !ev.OK {
		ev.Value = ""
	}
	return ev, nil
}

// Write writes value to key under token; basis is the value the section
// last saw, and excl says whether the section is exclusive. It returns the
// event to log.
func (c *StoreClient) Write(key string, token int64, value, basis string, excl bool) (Event, error) {
	ev := Event{Type: EvStoreWrite, Pid: c.pid, Op: c.nextOp(), Paths: []string{key}, Token: token, Value: value, Basis: basis, Excl: excl}
	reply, err := c.call(&ev, fmt.Sprintf("W %d %d %s %d %s %s %d", c.pid, ev.Op, key, token, value, basis, bit(excl)))
	ev.OK = err == nil && reply == "OK"
	return ev, err
}

func (c *StoreClient) call(ev *Event, req string) (string, error) {
	ev.Begin = time.Now().UnixNano()
	if _, err := c.c.Write([]byte(req + "\n")); err != nil {
		return "", fmt.Errorf("chaos: store: %w", err)
	}
	line, err := c.in.ReadString('\n')
	ev.Time = time.Now().UnixNano()
	if err != nil {
		return "", fmt.Errorf("chaos: store: %w", err)
	}
	line = strings.TrimSuffix(line, "\n")
	if msg, ok := strings.CutPrefix(line, "ERR "); ok {
		return "", fmt.Errorf("chaos: store: %s", msg)
	}
	return line, nil
}

func bit(b bool) int {
	if b {
		return 1
	}
	return 0
}
