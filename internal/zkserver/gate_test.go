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

// TestGateWaitAfterCallsBlockingOnceBeforeBlocking: WaitAfter calls
// blocking only when it is about to block, outside the gate's lock (it may
// use the gate), and once however often it is woken while the direction
// stays held.
func TestGateWaitAfterCallsBlockingOnceBeforeBlocking(t *testing.T) {
	var g Gate
	calls := 0
	if !g.WaitAfter(Up, nil, func() { calls++ }) || calls != 0 {
		t.Fatalf("an open gate: blocking called %d times", calls)
	}
	g.Hold(Up)
	blocked := make(chan struct{})
	waited := make(chan bool)
	go func() {
		waited <- g.WaitAfter(Up, nil, func() {
			calls++
			if g.Held()&Up == 0 {
				t.Error("blocking called while Up is not held")
			}
			close(blocked)
		})
	}()
	<-blocked
	g.Restore()
	g.Hold(Up) // a waiter woken by the Restore may find it held again
	g.Restore()
	if !<-waited || calls != 1 {
		t.Fatalf("blocking called %d times, want 1", calls)
	}
}
