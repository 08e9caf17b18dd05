package recipes

import (
	"errors"

	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/znode"
)

// Errors reported by a Session. Match them with errors.Is.
var (
	// ErrSessionExpired means ZooKeeper expired the session: every
	// ephemeral node it owned, and so every lock it held, is gone.
	ErrSessionExpired = errSessionExpired() // "recipes: session expired"

	// ErrSessionLost means the session went so long without proof that the
	// leader heard from it that the leader may expire it soon, while a
	// recipe held, waited or acquired on it. It is declared by a
	// client-side deadline before the server can hand this session's locks
	// to anyone else, so it can arrive while the server still holds the
	// session. A session on which nothing is held or waited for ends with
	// it only once its connection has been down for the whole session
	// timeout.
	ErrSessionLost = errors.New("recipes: session lost (no proof of life within the session timeout)")

	// ErrClosed means Close was called on the session.
	ErrClosed = errors.New("recipes: session closed")

	// ErrRequestDropped is wrapped by the error of a call whose request
	// ZooKeeper answered by closing the connection, MaxDrops times in a
	// row, though the server answered the session in between (see
	// Session.Retry): a server drops the connection of a request it cannot
	// take, such as one over its jute.maxbuffer, which a server may set
	// below the default the recipes check against (MaxRequest). That call
	// fails; the session and its other holds carry on. Nothing the call
	// would have created is left behind.
	ErrRequestDropped = errors.New("recipes: request dropped by ZooKeeper")

	// ErrInvalid is wrapped by every error for bad arguments to Connect,
	// NewSession and the recipe packages: servers, options, a missing
	// connection, a malformed path, a count below 1, data too large, a nil
	// session. Nothing is created. (ValidatePath's own errors do not wrap
	// it; a constructor's error for the same path does.)
	ErrInvalid = errInvalid() // "recipes: invalid argument"

	// ErrOtherRecipe is wrapped by the error of a recipe whose path another
	// kind of recipe uses (a Mutex's and a Semaphore's, say): their layouts
	// differ, so they would not exclude each other. The error names the
	// node found. Nothing is left behind.
	ErrOtherRecipe = errors.New("recipes: path used by another recipe")
)

// Two of these errors are declared where the internal packages that report
// them can name them, and only exported here: a function call, as io/fs
// does, keeps the internal name out of the documentation.

func errSessionExpired() error { return znode.ErrSessionExpired }

func errInvalid() error { return args.ErrInvalid }
