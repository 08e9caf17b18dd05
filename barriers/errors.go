package barriers

import (
	"errors"
)

// Errors returned by the barriers. Match them with errors.Is; each is wrapped
// with the details of the case.
var (
	// ErrEntered is returned by DoubleBarrier.Enter when this value has
	// entered and not left yet.
	ErrEntered = errors.New("barriers: already entered")

	// ErrNotEntered is returned by DoubleBarrier.Leave when this value has
	// not entered.
	ErrNotEntered = errors.New("barriers: not entered")

	// ErrMembers is returned by DoubleBarrier.Enter when another member at
	// the barrier was made for a different member count: members must agree
	// on it, or some would wait forever for a count the others never reach.
	// This member's node is gone again. (A Curator member does not say its
	// count, and is never refused nor the cause of a refusal.)
	ErrMembers = errors.New("barriers: double barrier used with a different number of members")

	// ErrMemberLost is returned by DoubleBarrier.Leave when this member's
	// node is gone although the session lives: someone deleted it.
	ErrMemberLost = errors.New("barriers: member node deleted by someone else")
)
