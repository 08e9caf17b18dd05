// Package jute sizes the requests the recipes send, byte for byte as
// go-zookeeper v1.0.4 encodes them, so that a request ZooKeeper would refuse
// is refused here before anything is sent.
//
// ZooKeeper reads a request as a 4-byte length and then that many bytes: the
// request header (xid and opcode, two int32) and the request's record. A
// server closes the connection, without an answer, on a length over its
// jute.maxbuffer (NIOServerCnxn.readLength and NettyServerCnxn: "Len error");
// the strings and buffers inside the record are checked against
// jute.maxbuffer plus zookeeper.jute.maxbuffer.extrasize (by default
// jute.maxbuffer again), so within a packet that passed they never are the
// limit. Jute encodes an int as 4 bytes, a long as 8, a boolean as 1, a
// string or a buffer as its length (an int; -1 for a nil buffer) and its
// bytes, and a vector as its count and its elements.
//
// The sizes here are what the length carries: the whole request without the
// 4-byte length itself.
package jute

import (
	"encoding/binary"
	"fmt"
	"reflect"

	"github.com/go-zookeeper/zk"
)

// MaxRequest is the largest request ZooKeeper takes with its default
// jute.maxbuffer (0xfffff): the length a request carries may be at most this.
const MaxRequest = 0xfffff

const (
	header    = 8 // requestHeader: xid, opcode
	intSize   = 4
	boolSize  = 1
	lenPrefix = 4 // of a string, a buffer or a vector
	// multiHeader is each op's header in a multi, and the trailing one that
	// ends the list: type (int), done (boolean), err (int).
	multiHeader = intSize + boolSize + intSize
)

func str(s string) int { return lenPrefix + len(s) }

// ACL is the size of an ACL list: its count, and for each entry its
// permissions, scheme and id.
func ACL(acl []zk.ACL) int {
	n := lenPrefix
	for _, a := range acl {
		n += intSize + str(a.Scheme) + str(a.ID)
	}
	return n
}

// createBody is a CreateRequest's record: path, data, ACL, flags.
func createBody(path string, data int, acl []zk.ACL) int {
	return str(path) + lenPrefix + data + ACL(acl) + intSize
}

// Create is the size of a create (opCreate), or a create of a container
// (opCreateContainer, the same record), of path with data bytes of data. A
// sequential node's path is the one sent, without the sequence ZooKeeper
// appends.
func Create(path string, data int, acl []zk.ACL) int {
	return header + createBody(path, data, acl)
}

// Delete is the size of a delete of path: path and version.
func Delete(path string) int { return header + str(path) + intSize }

// Read is the size of a read of path with its watch flag: exists, getData,
// getChildren and getChildren2 all send path and a boolean.
func Read(path string) int { return header + str(path) + boolSize }

// Sync is the size of a sync of path.
func Sync(path string) int { return header + str(path) }

// SetData is the size of a setData of path with data bytes of data: path,
// data, version.
func SetData(path string, data int) int {
	return header + str(path) + lenPrefix + data + intSize
}

// SetAuth is the size of an addAuth: type (int), scheme, and the
// credentials as a buffer.
func SetAuth(scheme string, auth int) int {
	return header + intSize + str(scheme) + lenPrefix + auth
}

// Multi is the size of a multi of ops, which must be what zk.Conn.Multi
// takes: *zk.CreateRequest, *zk.SetDataRequest, *zk.DeleteRequest or
// *zk.CheckVersionRequest. Each op is its multiHeader and its record; a last
// multiHeader ends the list.
func Multi(ops ...any) (int, error) {
	n := header + multiHeader
	for _, op := range ops {
		size, err := Op(op)
		if err != nil {
			return 0, err
		}
		n += size
	}
	return n, nil
}

// Op is what one op adds to a multi (see Multi).
func Op(op any) (int, error) {
	if v := reflect.ValueOf(op); v.Kind() == reflect.Pointer && v.IsNil() {
		return 0, fmt.Errorf("a nil multi operation %T", op)
	}
	switch op := op.(type) {
	case *zk.CreateRequest:
		return multiHeader + createBody(op.Path, len(op.Data), op.Acl), nil
	case *zk.SetDataRequest:
		return multiHeader + str(op.Path) + lenPrefix + len(op.Data) + intSize, nil
	case *zk.DeleteRequest:
		return multiHeader + str(op.Path) + intSize, nil
	case *zk.CheckVersionRequest:
		return multiHeader + str(op.Path) + intSize, nil
	}
	return 0, fmt.Errorf("unknown multi operation %T", op)
}

// The opcodes of the requests that create or delete a node, whose record
// starts with its path (ZooDefs.OpCode): create, delete, create2,
// createContainer and createTTL; and of the ops a multi (opMulti) of
// zk.Conn.Multi carries besides create and delete: setData and check.
const (
	opCreate          = 1
	opDelete          = 2
	opSetData         = 5
	opCheck           = 13
	opMulti           = 14
	opCreate2         = 15
	opCreateContainer = 19
	opCreateTTL       = 21
)

// WritePath returns the path of the create or delete request in packet, a
// whole request as go-zookeeper writes it (the 4-byte length first), or
// false if packet is neither. For a multi it returns the path of its last
// op if that is a delete (a marked release: seqnode's deleteMarked).
func WritePath(packet []byte) (string, bool) {
	const head = lenPrefix + header // length, xid, opcode
	if len(packet) < head+lenPrefix || int(binary.BigEndian.Uint32(packet))+lenPrefix != len(packet) {
		return "", false
	}
	r := reader{b: packet[head:]}
	switch binary.BigEndian.Uint32(packet[lenPrefix+intSize:]) {
	case opCreate, opDelete, opCreate2, opCreateContainer, opCreateTTL:
		return r.str()
	case opMulti:
		return r.lastDelete()
	}
	return "", false
}

// A reader reads a request's record; after a short read every read fails.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) take(n int) []byte {
	if r.bad || n < 0 || n > len(r.b) {
		r.bad = true
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) int() int32 {
	v := r.take(intSize)
	if v == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(v))
}

// bytes reads a string or a buffer (-1 is a nil buffer).
func (r *reader) bytes() []byte {
	n := r.int()
	if n == -1 {
		return nil
	}
	return r.take(int(n))
}

func (r *reader) str() (string, bool) {
	s := r.bytes()
	return string(s), !r.bad
}

// lastDelete reads a multi's ops up to the header that ends them and
// returns the path of the last op if it is a delete.
func (r *reader) lastDelete() (string, bool) {
	var path string
	last := int32(0)
	for !r.bad {
		op := r.int()
		done := r.take(boolSize)
		r.int() // err
		if r.bad || done[0] != 0 {
			break
		}
		p, _ := r.str()
		switch op {
		case opCreate:
			r.bytes() // data
			// The ACL: its count, then each entry.
			for n := r.int(); n > 0 && !r.bad; n-- {
				r.int()   // perms
				r.bytes() // scheme
				r.bytes() // id
			}
			r.int() // flags
		case opDelete, opCheck:
			r.int() // version
		case opSetData:
			r.bytes() // data
			r.int()   // version
		default:
			return "", false
		}
		path, last = p, op
	}
	if r.bad || len(r.b) != 0 || last != opDelete {
		return "", false
	}
	return path, true
}
