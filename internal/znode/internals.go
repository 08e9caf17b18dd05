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
// functions (RecorderOf, SentOf, StateOf) rather than lookups set up at
// init.
type Internals struct {
	rec   *telemetry.Recorder
	sees  bool // the session sees what it writes: Connect made its connection
	sent  Sent
	state State
}

// NewInternals returns a session's internals: rec records for it, and
// seesWrites says whether its writes are shown to SentOf's Sent.
func NewInternals(rec *telemetry.Recorder, seesWrites bool) *Internals {
	return &Internals{rec: rec, sees: seesWrites}
}

func (in *Internals) internals() *Internals { return in }

// What a type embedding *Internals gets: the method Session asks for.
var _ interface{ internals() *Internals } = (*Internals)(nil)

// RecorderOf returns the recorder of sess.
func RecorderOf(sess Session) *telemetry.Recorder { return sess.internals().rec }

// SentOf returns the Sent of sess's connection, or nil if the recipes do
// not see what it writes (a session over the caller's *zk.Conn).
func SentOf(sess Session) *Sent {
	in := sess.internals()
	if !in.sees {
		return nil
	}
	return &in.sent
}

// StateOf returns what the recipe packages keep for sess.
func StateOf(sess Session) *State { return &sess.internals().state }
