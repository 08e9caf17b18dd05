package locks

import (
	"testing"

	"github.com/zkrecipes/recipes/internal/seqnode"
)

// TestEngineUsesTheExportedErrors: the engine ends holds with this
// package's errors, which its documentation names.
func TestEngineUsesTheExportedErrors(t *testing.T) {
	if seqnode.ErrLost != ErrLockLost || seqnode.ErrReleased != ErrReleased {
		t.Error("the engine ends holds with errors of its own")
	}
}
