package zkserver

import "testing"

func TestGateHoldsAccumulateUntilRestore(t *testing.T) {
	var g Gate
	open := make(chan struct{})
	if !g.Wait(Both, open) {
		t.Fatal("zero Gate holds")
	}
	g.Hold(Up)
	g.Hold(Down)
	if g.Held() != Both {
		t.Fatalf("Held = %v, want Both", g.Held())
	}
	g.Cut()
	if !g.IsCut() {
		t.Fatal("IsCut = false after Cut")
	}
	waited := make(chan bool)
	go func() { waited <- g.Wait(Down, nil) }()
	g.Restore()
	if !<-waited {
		t.Fatal("Wait returned false after Restore")
	}
	if g.Held() != 0 || g.IsCut() {
		t.Fatalf("after Restore: held %v, cut %v", g.Held(), g.IsCut())
	}
}

func TestGateWaitEndsWithDone(t *testing.T) {
	var g Gate
	g.Hold(Up)
	if !g.Wait(Down, nil) {
		t.Fatal("Wait(Down) blocked by a hold of Up")
	}
	done := make(chan struct{})
	close(done)
	if g.Wait(Up, done) {
		t.Fatal("Wait(Up) returned true while Up is held")
	}
}
