package znode

import (
	"context"
	"testing"
	"time"
)

// TestNeedLapsesOnlyWhenEngaged: the deadline passing matters only while
// something is engaged; an engagement on a session with no proof waits for
// one, and wakes the keep-alive.
func TestNeedLapsesOnlyWhenEngaged(t *testing.T) {
	n := newNeed()
	done := make(chan struct{})
	now := time.Now()
	if n.Lapsed(now) {
		t.Fatal("no proof yet and nothing engaged: lapsed")
	}

	n.Move(now.Add(time.Hour), now.Add(time.Hour))
	end, ok := n.Engage(context.Background(), done)
	if !ok {
		t.Fatal("engage with a proof: not ok")
	}
	select {
	case <-n.Wake():
	default:
		t.Fatal("the first engagement did not wake the keep-alive")
	}
	if !n.Plan() {
		t.Fatal("engaged, not busy")
	}
	if n.Lapsed(now) {
		t.Fatal("lapsed before the deadline")
	}
	if !n.Lapsed(now.Add(time.Hour)) {
		t.Fatal("engaged at the deadline: not lapsed")
	}
	end()
	if n.Plan() || n.Lapsed(now.Add(2*time.Hour)) {
		t.Fatal("nothing engaged: busy or lapsed")
	}

	// The deadline has passed: an engagement waits for the next proof.
	n.Move(time.Now().Add(-time.Second), time.Time{})
	got := make(chan bool, 1)
	go func() {
		end, ok := n.Engage(context.Background(), done)
		if ok {
			defer end()
		}
		got <- ok
	}()
	select {
	case <-n.Wake():
	case <-time.After(10 * time.Second):
		t.Fatal("a wait for a proof did not wake the keep-alive")
	}
	if !n.Plan() {
		t.Fatal("waiting for a proof, not busy")
	}
	select {
	case <-got:
		t.Fatal("engaged without a proof")
	default:
	}
	n.Move(time.Now().Add(time.Hour), time.Now().Add(time.Hour))
	if !<-got {
		t.Fatal("engage after the proof: not ok")
	}

	// A wait for a proof ends with its context, or the session.
	n.Move(time.Now().Add(-time.Second), time.Time{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok := n.Engage(ctx, done); ok {
		t.Fatal("engaged on an ended context with no proof")
	}
	close(done)
	if _, ok := n.Engage(context.Background(), done); ok {
		t.Fatal("engaged on an ended session with no proof")
	}
	if n.Plan() {
		t.Fatal("busy after the waits gave up")
	}
}

// TestNeedWant: a caller waiting for a probe's answer makes the session
// busy until it is done.
func TestNeedWant(t *testing.T) {
	n := newNeed()
	end := n.Want()
	select {
	case <-n.Wanted():
	default:
		t.Fatal("Want did not wake the keep-alive")
	}
	if !n.Plan() {
		t.Fatal("wanted, not busy")
	}
	end()
	if n.Plan() {
		t.Fatal("busy after Want ended")
	}
}

// TestNeedWakesOnlyAnIdlePlan: an acquisition on a proof wakes the
// keep-alive only if its last plan was an idle session's; one that must
// wait for a proof wakes it all the same.
func TestNeedWakesOnlyAnIdlePlan(t *testing.T) {
	n := newNeed()
	done := make(chan struct{})
	n.Move(time.Now().Add(time.Hour), time.Now().Add(time.Hour))
	woke := func() bool {
		select {
		case <-n.Wake():
			return true
		default:
			return false
		}
	}
	end, _ := n.Engage(context.Background(), done)
	if !woke() {
		t.Fatal("an acquisition on an idle plan did not wake the keep-alive")
	}
	if !n.Plan() {
		t.Fatal("engaged, not busy")
	}
	end()
	end, _ = n.Engage(context.Background(), done)
	if woke() {
		t.Fatal("an acquisition on a busy plan woke the keep-alive")
	}
	end()
	if n.Plan() {
		t.Fatal("nothing engaged, busy")
	}
	end, _ = n.Engage(context.Background(), done)
	if !woke() {
		t.Fatal("an acquisition after an idle plan did not wake the keep-alive")
	}
	n.Plan()
	end()

	n.Move(time.Now().Add(-time.Second), time.Time{})
	got := make(chan bool, 1)
	go func() {
		end, ok := n.Engage(context.Background(), done)
		if ok {
			end()
		}
		got <- ok
	}()
	select {
	case <-n.Wake():
	case <-time.After(10 * time.Second):
		t.Fatal("a wait for a proof on a busy plan did not wake the keep-alive")
	}
	n.Move(time.Now().Add(time.Hour), time.Now().Add(time.Hour))
	if !<-got {
		t.Fatal("engage after the proof: not ok")
	}
}
