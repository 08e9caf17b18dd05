package znode

import (
	"encoding/binary"
	"testing"
)

// request builds a request packet as go-zookeeper writes it: length, xid,
// opcode, then a record that starts with path.
func request(opcode int32, path string) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0) // the length, set below
	b = binary.BigEndian.AppendUint32(b, 7)    // xid
	b = binary.BigEndian.AppendUint32(b, uint32(opcode))
	b = binary.BigEndian.AppendUint32(b, uint32(len(path)))
	b = append(b, path...)
	b = append(b, 0xff, 0xff, 0xff, 0xff) // the rest of the record
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestSentSeesOnlyItsCreate(t *testing.T) {
	var s Sent
	written, stop := s.Wait("/a/_c_x-lock-")
	s.Written(request(1, "/a/_c_y-lock-"))  // another create
	s.Written(request(12, "/a/_c_x-lock-")) // a listing, not a write
	s.Written(request(1, "/a/_c_x-lock-")[:20])
	if closed(written) {
		t.Fatal("closed by another request")
	}
	s.Written(request(1, "/a/_c_x-lock-"))
	if !closed(written) {
		t.Fatal("not closed by its create")
	}
	stop()
	s.Written(request(1, "/a/_c_x-lock-")) // again, after the wait
	if n := s.waiters.Load(); n != 0 {
		t.Fatalf("%d waiters left", n)
	}
	deleted, stop := s.Wait("/a/_c_x-lock-0000000001")
	s.Written(request(2, "/a/_c_x-lock-0000000001"))
	if !closed(deleted) {
		t.Fatal("not closed by its delete")
	}
	stop()
}

func TestSentStopEndsTheWait(t *testing.T) {
	var s Sent
	written, stop := s.Wait("/b/_c_x-lock-")
	stop()
	stop()
	s.Written(request(15, "/b/_c_x-lock-"))
	if closed(written) {
		t.Fatal("closed after stop")
	}
	if n := s.waiters.Load(); n != 0 {
		t.Fatalf("%d waiters left", n)
	}
	s.Relisted()
	if s.Relists() != 1 {
		t.Fatalf("Relists = %d", s.Relists())
	}
}
