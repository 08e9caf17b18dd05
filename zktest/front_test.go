package zktest

import (
	"encoding/binary"
	"testing"
	"time"
)

// connectResponse is the packet a server answers a connect request with.
func connectResponse(timeoutMs int32, id int64, passwd []byte) []byte {
	body := binary.BigEndian.AppendUint32(nil, 0) // protocol version
	body = binary.BigEndian.AppendUint32(body, uint32(timeoutMs))
	body = binary.BigEndian.AppendUint64(body, uint64(id))
	body = binary.BigEndian.AppendUint32(body, uint32(len(passwd)))
	body = append(body, passwd...)
	body = append(body, 0) // not read-only
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// TestTapReadsConnectResponses: a session is learned from its connect
// response however the bytes are split, and nothing from anything else.
func TestTapReadsConnectResponses(t *testing.T) {
	passwd := []byte("0123456789abcdef")
	granted := connectResponse(4000, 0x77, passwd)
	for _, tc := range []struct {
		name   string
		chunks [][]byte
		learn  bool
	}{
		{"whole", [][]byte{granted}, true},
		{"byte by byte", split(granted, 1), true},
		{"in threes", split(granted, 3), true},
		{"with requests' replies behind it", [][]byte{append(append([]byte(nil), granted...), 0, 0, 0, 16)}, true},
		{"an expired session's refusal", [][]byte{connectResponse(0, 0, make([]byte, 16))}, false},
		{"a four-letter word's answer", [][]byte{[]byte("Zookeeper version: 3.8.4\n")}, false},
		{"TLS", [][]byte{{0x16, 0x03, 0x03, 0x00, 0x7a, 0x02}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &front{servers: []string{"127.0.0.1:1"}}
			defer sessions.forget(f)
			tp := &tap{front: f}
			for _, c := range tc.chunks {
				if !tp.See(c) {
					break
				}
			}
			s, err := sessions.lookup(0x77)
			if learned := err == nil && s.front == f; learned != tc.learn {
				t.Fatalf("learned %v (%v), want %v", learned, err, tc.learn)
			}
			if tc.learn && (string(s.passwd) != string(passwd) || s.timeout != 4*time.Second) {
				t.Fatalf("learned password %q, timeout %v", s.passwd, s.timeout)
			}
		})
	}
}

func split(b []byte, n int) [][]byte {
	var out [][]byte
	for len(b) > n {
		out = append(out, b[:n])
		b = b[n:]
	}
	return append(out, b)
}

// TestRegistryTellsEqualIDsApart: two servers can grant the same id and
// password. The session with a connection open is the one expired; with
// connections open to both, none is.
func TestRegistryTellsEqualIDsApart(t *testing.T) {
	const id = 0x99
	a := &front{servers: []string{"127.0.0.1:1"}}
	b := &front{servers: []string{"127.0.0.1:2", "127.0.0.1:3"}}
	defer sessions.forget(a)
	defer sessions.forget(b)
	resp := connectResponse(2000, id, []byte("0123456789abcdef"))
	ta, tb := &tap{front: a}, &tap{front: b, member: 1}
	ta.See(resp)
	tb.See(resp)
	if _, err := sessions.lookup(id); err == nil {
		t.Fatal("an id open through two fronts was taken as one session")
	}
	ta.Closed()
	if s, err := sessions.lookup(id); err != nil || s.front != b {
		t.Fatalf("lookup = %v, %v; want front b's", s.front, err)
	}
	if m, ok := sessions.member(id, b); !ok || m != 1 {
		t.Fatalf("member = %d, %v; want 1", m, ok)
	}
	tb.Closed()
	// Neither open: the one learned last.
	if s, err := sessions.lookup(id); err != nil || s.front != b {
		t.Fatalf("lookup = %v, %v; want front b's, learned last", s.front, err)
	}
	if _, ok := sessions.member(id, b); ok {
		t.Fatal("a closed connection still counts")
	}
}
