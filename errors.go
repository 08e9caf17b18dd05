package recipes

import "errors"

// Errors reported by a Session. Match them with errors.Is.
var (
	// ErrSessionExpired means ZooKeeper expired the session: every
	// ephemeral node it owned, and so every lock it held, is gone.
	ErrSessionExpired = errors.New("recipes: session expired")

	// ErrSessionLost means the client was cut off from the ensemble for so
	// long that the server may already have expired the session. It is
	// declared by a client-side timer before the server can hand this
	// session's locks to anyone else, so it can arrive while the server
	// still holds the session.
	ErrSessionLost = errors.New("recipes: session lost (disconnected for the session timeout)")

	// ErrClosed means Close was called on the session.
	ErrClosed = errors.New("recipes: session closed")
)
