package zktest

import (
	"errors"
	"net"
	"testing"
	"time"
)

// TestHandshakeDialerClosesSilentConnection: a server that accepts and never
// answers (ZooKeeper in its startup window) has its connection closed, so
// go-zookeeper moves on; one that answers keeps it.
func TestHandshakeDialerClosesSilentConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 2)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	dial := handshakeDialer(50 * time.Millisecond)

	silent, err := dial("tcp", ln.Addr().String(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	peer := <-accepted
	defer peer.Close()
	// No read deadline: only the bound can end this read.
	if _, err := silent.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read from a silent server = %v, want the connection closed", err)
	}

	talking, err := dial("tcp", ln.Addr().String(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer talking.Close()
	peer2 := <-accepted
	defer peer2.Close()
	if _, err := peer2.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := talking.Read(make([]byte, 1)); err != nil {
		t.Fatalf("first read: %v", err)
	}
	// Past the bound the connection still works: the timer was stopped.
	// Not a synchronisation: the bound has to pass to show it no longer applies.
	time.Sleep(100 * time.Millisecond)
	if _, err := peer2.Write([]byte("y")); err != nil {
		t.Fatal(err)
	}
	if _, err := talking.Read(make([]byte, 1)); err != nil {
		t.Fatalf("read after the bound: %v", err)
	}
}
