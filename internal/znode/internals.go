package znode

import "github.com/zkrecipes/recipes/internal/telemetry"

// Internals are what a session carries for the internal packages beyond
// what its methods offer: its Parts.
//
// *recipes.Session embeds *Internals under an unexported name. Internals
// has one method, unexported, and no exported field, so the Session
// satisfies Session, which asks for that method, while nothing of
// Internals enters the Session's public API; the internal packages reach a
// session's Parts through a plain function (Of) rather than lookups set up
// at init.
type Internals struct {
	parts Parts
}

// Parts are a session's internals as the internal packages use them: where
// the recipes record what they do (Recorder), the creates and deletes it
// writes (Sent), what the recipe packages keep for it (State), what its
// acquisitions need of its keep-alive (Need), and its container creates in
// flight (Containers). They are not embedded in the Session, so their
// methods are not the Session's.
type Parts struct {
	rec   *telemetry.Recorder
	sees  bool // the session sees what it writes: Connect made its connection
	sent  Sent
	state State
	need  Need
	cont  Containers
}

// NewInternals returns a session's internals: rec records for it, and
// seesWrites says whether its writes are shown to its Sent.
func NewInternals(rec *telemetry.Recorder, seesWrites bool) *Internals {
	return &Internals{Parts{rec: rec, sees: seesWrites, need: newNeed()}}
}

func (in *Internals) internals() *Internals { return in }

// What a type embedding *Internals gets: the method Session asks for.
var _ interface{ internals() *Internals } = (*Internals)(nil)

// Of returns the Parts of sess.
func Of(sess Session) *Parts { return &sess.internals().parts }

// Recorder is where the recipes record what they do on the session.
func (p *Parts) Recorder() *telemetry.Recorder { return p.rec }

// Sent is the Sent of the session's connection, or nil if the recipes do
// not see what it writes (a session over the caller's *zk.Conn).
func (p *Parts) Sent() *Sent {
	if !p.sees {
		return nil
	}
	return &p.sent
}

// State is what the recipe packages keep for the session.
func (p *Parts) State() *State { return &p.state }

// Containers are the session's container creates in flight.
func (p *Parts) Containers() *Containers { return &p.cont }
