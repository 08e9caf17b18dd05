package zkserver

import "sync"

// Direction names one or both directions of a proxied connection.
type Direction uint8

const (
	// Up is the direction from the side that dialed the proxy (a client, or
	// the server that opened a server-to-server connection) to the target.
	Up Direction = 1 << iota
	// Down is the direction from the target back to the dialing side.
	Down
	// Both is Up and Down.
	Both = Up | Down
)

// Gate is the fault state shared by a proxy's connections: whether the
// proxy is cut, and which directions are held. The zero Gate is open. It
// only records state and wakes waiters; the proxy that owns it closes
// connections on Cut. TCPProxy and testenv.Proxy both use it, so their
// faults mean the same thing.
type Gate struct {
	mu      sync.Mutex
	cut     bool
	held    Direction
	changed chan struct{} // closed and replaced when held shrinks; nil until needed
}

// Cut marks the gate cut until Restore.
func (g *Gate) Cut() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.cut = true
}

// Hold adds d to the held directions. Holds accumulate: Hold(Up) then
// Hold(Down) holds both.
func (g *Gate) Hold(d Direction) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held |= d
}

// Restore clears the cut and every hold, and wakes every waiter.
func (g *Gate) Restore() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.cut = false
	g.held = 0
	if g.changed != nil {
		close(g.changed)
		g.changed = nil
	}
}

// IsCut reports whether the gate is cut.
func (g *Gate) IsCut() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cut
}

// Held returns the directions currently held.
func (g *Gate) Held() Direction {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.held
}

// Wait blocks while any direction in d is held. It returns true once none
// is, and false if done is closed first.
func (g *Gate) Wait(d Direction, done <-chan struct{}) bool {
	return g.WaitAfter(d, done, nil)
}

// WaitAfter is Wait that calls blocking, if not nil, once, when it finds a
// direction in d held and before it blocks: a proxy writes there what it
// let through before, so that nothing that passed the gate is kept back by
// a hold that began after it passed.
func (g *Gate) WaitAfter(d Direction, done <-chan struct{}, blocking func()) bool {
	for {
		g.mu.Lock()
		if g.held&d == 0 {
			g.mu.Unlock()
			return true
		}
		if g.changed == nil {
			g.changed = make(chan struct{})
		}
		changed := g.changed
		g.mu.Unlock()
		if blocking != nil {
			blocking()
			blocking = nil
		}
		select {
		case <-changed:
		case <-done:
			return false
		}
	}
}
