package znode

import "github.com/zkrecipes/recipes/internal/telemetry"

// Internals are what a session carries for the internal packages beyond
// what its methods offer: where the recipes record what they do (Recorder),
// the creates and deletes it writes (Sent), and what the recipe packages
// keep for it (State).
//
// *recipes.Session embeds *Internals under an unexported name. The one
// method of Internals is unexported, so the Session satisfies Session, which
// asks for it, while nothing of Internals enters the Session's public API,
// and the internal packages reach a session's internals through plain
// function (Of) rather than lookups set up at init.
type Internals struct {
	rec   *telemetry.Recorder
	sees  bool // the session sees what it writes: Connect made its connection
	sent  Sent
	state State
}

// NewInternals returns a session's internals: rec records for it, and
// seesWrites says whether its writes are shown to its Sent.
func NewInternals(rec *telemetry.Recorder, seesWrites bool) *Internals {
	return &Internals{rec: rec, sees: seesWrites}
}

func (in *Internals) internals() *Internals { return in }

// What a type embedding *Internals gets: the method Session asks for.
var _ interface{ internals() *Internals } = (*Internals)(nil)

// Of returns the internals of sess.
func Of(sess Session) *Internals { return sess.internals() }

// Recorder is where the recipes record what they do on the session.
func (in *Internals) Recorder() *telemetry.Recorder { return in.rec }

// Sent is the Sent of the session's connection, or nil if the recipes do
// not see what it writes (a session over the caller's *zk.Conn).
func (in *Internals) Sent() *Sent {
	if !in.sees {
		return nil
	}
	return &in.sent
}

// State is what the recipe packages keep for the session.
func (in *Internals) State() *State { return &in.state }
