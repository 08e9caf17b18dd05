package zktest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"testing"
	"time"
)

// expireBound bounds ExpireSession's attempt on each server.
const expireBound = 5 * time.Second

// closeSessionOp is ZooKeeper's closeSession request, -11, as it goes on
// the wire.
const closeSessionOp uint32 = 1<<32 - 11

// ExpireSession ends the session with the given id on the server, as a
// session timeout would, and returns once the server has ended it: its
// ephemeral nodes are gone and its watches with them. On an ensemble that
// is so on the member that ended it; read through another member after a
// Sync. The client is not told first: it hears that its session expired
// when it next reaches the server. A connected client does within about a
// second: the server closes its connection, go-zookeeper waits a second
// before it dials again, and the server refuses the reconnect as expired.
// This is Curator's KillSession: the kit opens a second connection to the
// session, with its password, and closes the session there.
//
// The session must have connected through an address this package handed
// out (Server.Servers, Ensemble.Servers, Servers), or a Proxy in front of
// one: that is where the kit learns the password. Pass the id the client
// reports: recipes.Session's ID or go-zookeeper's Conn.SessionID. To end
// the session a lock or an election's term is held in, one that code under
// test made (an election.Runner's), ask the hold for it:
// h.Session().ID() (locks.Hold's Session). A session that has expired
// already is left as it is. Call ExpireSession from the
// goroutine running the test: it fails the test if it cannot expire the
// session.
func ExpireSession(tb testing.TB, sessionID int64) {
	tb.Helper()
	if err := expire(sessionID); err != nil {
		tb.Fatalf("zktest: expire session 0x%x: %v", uint64(sessionID), err)
	}
}

// expirePatience bounds ExpireSession's tries. A client that reconnects
// while the kit is connected to its session makes the server close the
// kit's connection instead, and the kit tries again.
const expirePatience = 3 * expireBound

func expire(id int64) error {
	if id == 0 {
		return errors.New("no session (id 0): the client has none yet")
	}
	s, err := sessions.lookup(id)
	if err != nil {
		return err
	}
	// The member that carries the session first, if one does.
	order := slices.Clone(s.front.servers)
	if m, ok := s.liveMember(); ok {
		order[0], order[m] = order[m], order[0]
	}
	deadline := time.Now().Add(expirePatience)
	for {
		var errs []error
		for _, addr := range order {
			err := closeSession(addr, id, s.passwd, s.timeout)
			if err == nil {
				return nil
			}
			errs = append(errs, fmt.Errorf("%s: %w", addr, err))
		}
		if time.Now().After(deadline) {
			return errors.Join(errs...)
		}
		time.Sleep(50 * time.Millisecond) // before trying again
	}
}

// closeSession connects to the session id at addr, asking for its timeout,
// and closes it there.
func closeSession(addr string, id int64, passwd []byte, timeout time.Duration) error {
	c, err := net.DialTimeout("tcp", addr, expireBound)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(expireBound)); err != nil {
		return err
	}
	// A connect request: protocol version, the last zxid seen, the
	// timeout, the session and its password, and not read-only.
	req := binary.BigEndian.AppendUint32(nil, 0)
	req = binary.BigEndian.AppendUint64(req, 0)
	req = binary.BigEndian.AppendUint32(req, uint32(timeout.Milliseconds()))
	req = binary.BigEndian.AppendUint64(req, uint64(id))
	req = binary.BigEndian.AppendUint32(req, uint32(len(passwd)))
	req = append(req, passwd...)
	req = append(req, 0)
	if err := writePacket(c, req); err != nil {
		return err
	}
	resp, err := readPacket(c)
	if err != nil {
		return fmt.Errorf("connect response: %w", err)
	}
	if len(resp) < 20 {
		return fmt.Errorf("connect response of %d bytes", len(resp))
	}
	if timeout := int32(binary.BigEndian.Uint32(resp[4:])); timeout <= 0 {
		return nil // expired already: the server refuses to reopen it
	}
	const xid = 1
	req = binary.BigEndian.AppendUint32(nil, xid)
	req = binary.BigEndian.AppendUint32(req, closeSessionOp)
	if err := writePacket(c, req); err != nil {
		return err
	}
	for {
		reply, err := readPacket(c)
		if err != nil {
			return fmt.Errorf("close reply: %w", err)
		}
		if len(reply) >= 16 && int32(binary.BigEndian.Uint32(reply)) == xid {
			if code := int32(binary.BigEndian.Uint32(reply[12:])); code != 0 {
				return fmt.Errorf("close refused with error code %d", code)
			}
			return nil
		}
	}
}

func writePacket(w io.Writer, body []byte) error {
	_, err := w.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...))
	return err
}

// readPacket reads one length-prefixed packet and returns its body.
func readPacket(r io.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > connectResponseMax {
		return nil, fmt.Errorf("packet of %d bytes, more than expected", size)
	}
	body := make([]byte, size)
	_, err := io.ReadFull(r, body)
	return body, err
}
