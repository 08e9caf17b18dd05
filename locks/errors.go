package locks

import (
	"errors"

	"github.com/zkrecipes/recipes/internal/seqnode"
)

// Errors returned by the locks in this package. Match them with errors.Is;
// each is wrapped with the details of the case.
var (
	// ErrNotHeld is returned when releasing, or asking about, a lock that
	// the given context does not hold. Nothing is deleted.
	ErrNotHeld = errors.New("locks: not held")

	// ErrLockLost means the lock was taken away while held: its node was
	// deleted by someone else, or the session ended (expired, or cut off
	// for the session timeout). It is the cause of the held context's
	// cancellation (see context.Cause) and what Unlock returns afterwards.
	ErrLockLost = seqnode.ErrLost

	// ErrReleased is the cause of a held context's cancellation after
	// Unlock released the lock.
	ErrReleased = seqnode.ErrReleased

	// ErrInvalid is wrapped by every error for bad input: a malformed path,
	// data too large, a nil session. Nothing is created.
	ErrInvalid = errors.New("locks: invalid argument")
)
