package chaos

import (
	"fmt"
	"os"
)

// storeConn is one loop's connection to the run's Store, made when first
// needed and again after an error; nil when the run has no store.
type storeConn struct {
	w *worker
	c *StoreClient
}

func (w *worker) storeConn() *storeConn {
	if w.spec.Store == "" {
		return nil
	}
	return &storeConn{w: w}
}

func (sc *storeConn) get() (*StoreClient, error) {
	if sc.c == nil {
		c, err := DialStore(sc.w.spec.Store, os.Getpid(), &sc.w.storeOps, &sc.w.storeMu)
		if err != nil {
			return nil, err
		}
		sc.c = c
	}
	return sc.c, nil
}

func (sc *storeConn) close() {
	if sc != nil && sc.c != nil {
		_ = sc.c.Close()
		sc.c = nil
	}
}

// storeSection is one section's use of the store. Its first touch reads
// each of its paths' keys, fenced: a later write under a smaller token is
// refused (Store); the others write a new value, named after the hold, on
// the value last seen (the Basis). A reader of an RWMutex only reads,
// fenced too, so that a superseded writer cannot write under its feet. A
// semaphore's leases share their key, and their tokens do not order them:
// they write without one. Nothing is sent once the hold has ended — a
// holder told of its loss stops — but a blind section's last writes
// (Spec.Blind).
type storeSection struct {
	w     *worker
	c     *storeConn
	id    string
	h     *held
	basis map[string]string // by path: the value last seen
	n     int               // writes sent
}

func (s *storeSection) touch(first, last bool) {
	shared := s.h.recipe == RecipeRead || s.h.recipe == RecipeLease
	for i, p := range s.h.paths {
		select {
		case <-s.h.done:
			if !last || !s.w.spec.Blind {
				return
			}
		default:
		}
		token := s.h.tokens[i]
		if s.w.spec.Unguarded || s.w.spec.NoLock || s.h.recipe == RecipeLease {
			token = 0
		}
		c, err := s.c.get()
		if err != nil {
			fmt.Fprintf(os.Stderr, "chaos worker %d: %v\n", os.Getpid(), err)
			return
		}
		var ev Event
		if first || s.h.recipe == RecipeRead {
			ev, err = c.Read(p, token, s.h.recipe != RecipeLease)
			if err == nil && ev.OK {
				s.basis[p] = ev.Value
			}
		} else {
			s.n++
			value := fmt.Sprintf("%s:%d", s.id, s.n)
			basis, ok := s.basis[p]
			if !ok {
				basis = "?" // not read: a lease, or a read the store refused
			}
			ev, err = c.Write(p, token, value, basis, !shared)
			if err == nil && ev.OK {
				s.basis[p] = value
			}
		}
		if err != nil {
			// The store has what it did with the operation.
			fmt.Fprintf(os.Stderr, "chaos worker %d: %v\n", os.Getpid(), err)
			s.c.close()
			return
		}
		ev.Hold = s.id
		_ = s.w.log.Append(ev)
	}
}
