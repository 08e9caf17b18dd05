// Package background lets recipes hand work to the session that owns it, so
// that the work outlives the call that started it (a cleanup that must not be
// cut short by the caller's context) and Session.Close still waits for it.
//
// The recipes package installs Run at init; it is not part of the public API.
package background

// Run starts f on a goroutine owned by session s (a *recipes.Session) and
// reports whether it did; it does not once the session has ended, when the
// session's ephemeral nodes are gone and there is nothing left to clean.
var Run func(s any, f func()) bool
