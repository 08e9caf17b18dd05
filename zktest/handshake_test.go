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
	dial := (&sockets{bound: 50 * time.Millisecond}).dial // what is awaited is the close

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

	// The server's first byte must arrive within the bound for the timer
	// to stop, and a loaded machine can delay our write and read past any
	// fixed bound: double it until the byte wins, which is what is awaited.
	bound := 50 * time.Millisecond
	var talking net.Conn
	for talking == nil {
		c, err := (&sockets{bound: bound}).dial("tcp", ln.Addr().String(), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		peer = <-accepted
		defer peer.Close()
		if _, err := peer.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		switch _, err := c.Read(make([]byte, 1)); {
		case err == nil:
			talking = c
		case errors.Is(err, net.ErrClosed) && bound < time.Minute:
			bound *= 2 // the bound passed before the byte was read
		default:
			t.Fatalf("first read: %v", err)
		}
	}
	// Past the bound the connection still works: the timer was stopped.
	// Not a synchronisation: the bound has to pass to show it no longer applies.
	time.Sleep(2 * bound)
	if _, err := peer.Write([]byte("y")); err != nil {
		t.Fatal(err)
	}
	if _, err := talking.Read(make([]byte, 1)); err != nil {
		t.Fatalf("read after the bound: %v", err)
	}
}
