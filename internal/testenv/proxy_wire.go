package testenv

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
)

// ZooKeeper request opcodes, for DropReply match functions.
const (
	OpNotification    int32 = 0
	OpCreate          int32 = 1
	OpDelete          int32 = 2
	OpExists          int32 = 3
	OpGetData         int32 = 4
	OpSetData         int32 = 5
	OpGetACL          int32 = 6
	OpSetACL          int32 = 7
	OpGetChildren     int32 = 8
	OpSync            int32 = 9
	OpPing            int32 = 11
	OpGetChildren2    int32 = 12
	OpCheck           int32 = 13
	OpMulti           int32 = 14
	OpCreate2         int32 = 15
	OpReconfig        int32 = 16
	OpCheckWatches    int32 = 17
	OpRemoveWatches   int32 = 18
	OpCreateContainer int32 = 19
	OpDeleteContainer int32 = 20
	OpCreateTTL       int32 = 21
	OpMultiRead       int32 = 22
	OpSetAuth         int32 = 100
	OpSetWatches      int32 = 101
	OpGetEphemerals   int32 = 103
	OpSetWatches2     int32 = 105
	OpAddWatch        int32 = 106
	OpCloseSession    int32 = -11
)

// xidNotification is the xid of a watch notification from the server.
const xidNotification int32 = -1

// maxFrame bounds the packet size the proxy accepts (the server's default
// jute.maxbuffer is about 1MB; leave generous room).
const maxFrame = 64 << 20

// proxyBuffer is the size of the buffer each direction of a proxied
// connection reads through: packets that came in together are read in one
// system call, and written on in one (batch).
const proxyBuffer = 64 << 10

// frameBuffered reports whether r holds a whole packet that can be read
// without waiting.
func frameBuffered(r *bufio.Reader) bool {
	if r.Buffered() < 4 {
		return false
	}
	hdr, err := r.Peek(4)
	return err == nil && 4+int64(binary.BigEndian.Uint32(hdr)) <= int64(r.Buffered())
}

// A batch gathers the packets read together from one side of a proxied
// connection, so that they reach the other in one write, as they came.
type batch struct {
	dst net.Conn
	buf []byte
}

func (b *batch) add(frame []byte) { b.buf = append(b.buf, frame...) }

// flush writes what was gathered. A buffer grown past proxyBuffer by a
// large packet is let go, not kept for the connection's life.
func (b *batch) flush() error {
	if len(b.buf) == 0 {
		return nil
	}
	_, err := b.dst.Write(b.buf)
	b.buf = b.buf[:0]
	if cap(b.buf) > proxyBuffer {
		b.buf = nil
	}
	return err
}

// readFrame reads one length-prefixed packet and returns it including its
// 4-byte length prefix.
func readFrame(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > maxFrame {
		return nil, fmt.Errorf("testenv: proxy: packet length %d too large", n)
	}
	frame := make([]byte, 4+int(n))
	copy(frame, hdr[:])
	if _, err := io.ReadFull(r, frame[4:]); err != nil {
		return nil, err
	}
	return frame, nil
}

// hasPath reports whether a request with opcode op starts, after the request
// header, with the path it operates on.
func hasPath(op int32) bool {
	switch op {
	case OpCreate, OpDelete, OpExists, OpGetData, OpSetData, OpGetACL, OpSetACL,
		OpGetChildren, OpSync, OpGetChildren2, OpCheck, OpCreate2, OpCheckWatches,
		OpRemoveWatches, OpCreateContainer, OpDeleteContainer, OpCreateTTL,
		OpGetEphemerals, OpAddWatch:
		return true
	}
	return false
}

// parseRequest decodes the header of a client request frame (after the
// connect request): xid, opcode and, where present, the path. For multi
// requests the path is that of the first operation.
func parseRequest(frame []byte) (xid, op int32, path string, ok bool) {
	if xid, op, ok = parseHeader(frame); !ok {
		return 0, 0, "", false
	}
	rest := frame[4+8:]
	switch {
	case hasPath(op):
		path, _ = readString(rest)
	case op == OpMulti || op == OpMultiRead:
		// Each operation is preceded by a MultiHeader: type int32,
		// done bool, err int32.
		if len(rest) >= 9 {
			if t := int32(binary.BigEndian.Uint32(rest[0:4])); t != -1 && rest[4] == 0 {
				path, _ = readString(rest[9:])
			}
		}
	}
	return xid, op, path, true
}

// parseHeader is parseRequest without the path, which costs a copy.
func parseHeader(frame []byte) (xid, op int32, ok bool) {
	body := frame[4:]
	if len(body) < 8 {
		return 0, 0, false
	}
	return int32(binary.BigEndian.Uint32(body[0:4])), int32(binary.BigEndian.Uint32(body[4:8])), true
}

// parseReplyXid returns the xid of a server reply frame (after the connect
// response). Replies start with xid int32, zxid int64, err int32.
func parseReplyXid(frame []byte) (int32, bool) {
	body := frame[4:]
	if len(body) < 16 {
		return 0, false
	}
	return int32(binary.BigEndian.Uint32(body[0:4])), true
}

// readString decodes a jute string: int32 length (-1 for null) and bytes.
func readString(b []byte) (string, bool) {
	if len(b) < 4 {
		return "", false
	}
	n := int32(binary.BigEndian.Uint32(b[0:4]))
	if n < 0 || int(n) > len(b)-4 {
		return "", false
	}
	return string(b[4 : 4+n]), true
}
