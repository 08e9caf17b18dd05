package recipes

import (
	"errors"

	"github.com/zkrecipes/recipes/internal/znode"
)

// Errors reported by a Session. Match them with errors.Is.
var (
	// ErrSessionExpired means ZooKeeper expired the session: every
	// ephemeral node it owned, and so every lock it held, is gone.
	ErrSessionExpired = znode.ErrSessionExpired

	// ErrSessionLost means the session went so long without proof that the
	// leader heard from it that the leader may expire it soon. It is
	// declared by a client-side deadline before the server can hand this
	// session's locks to anyone else, so it can arrive while the server
	// still holds the session.
	ErrSessionLost = errors.New("recipes: session lost (no proof of life within the session timeout)")

	// ErrClosed means Close was called on the session.
	ErrClosed = errors.New("recipes: session closed")

	// ErrInvalid is wrapped by the errors for bad arguments: servers,
	// options, a missing connection.
	ErrInvalid = errors.New("recipes: invalid argument")
)
