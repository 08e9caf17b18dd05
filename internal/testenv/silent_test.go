package testenv

import (
	"context"
	"io"
	"net"
	"testing"
	"time"
)

// TestSilentNeverAnswers: the listener accepts, reads what it is sent,
// answers nothing, and counts the connections their client closed.
func TestSilentNeverAnswers(t *testing.T) {
	t.Parallel()
	s := SilentT(t)
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("a connect request")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Wait(ctx, func(accepted, _ int) bool { return accepted == 1 }); err != nil {
		t.Fatal(err)
	}
	// Half-closed, the client is done sending: the listener closes its end
	// without having sent a byte.
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(c); err != nil || len(got) != 0 {
		t.Fatalf("the silent listener answered %q (%v)", got, err)
	}
	if err := s.Wait(ctx, func(_, hungUp int) bool { return hungUp == 1 }); err != nil {
		t.Fatal(err)
	}
}
