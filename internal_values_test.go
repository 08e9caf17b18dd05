package recipes

import (
	"testing"

	"github.com/zkrecipes/recipes/internal/args"
	"github.com/zkrecipes/recipes/internal/jute"
	"github.com/zkrecipes/recipes/internal/znode"
)

// TestInternalPackagesUseTheExportedValues: what this package exports is
// spelt out here, so that its documentation names no internal package; the
// internal packages, which check and report with their own names, must
// agree with it.
func TestInternalPackagesUseTheExportedValues(t *testing.T) {
	if MaxDataSize != args.MaxDataSize {
		t.Errorf("MaxDataSize is %d; args checks %d", MaxDataSize, args.MaxDataSize)
	}
	if MaxRequest != jute.MaxRequest {
		t.Errorf("MaxRequest is %d; jute checks %d", MaxRequest, jute.MaxRequest)
	}
	if args.ErrInvalid != ErrInvalid || znode.ErrSessionExpired != ErrSessionExpired {
		t.Error("an internal package reports an error of its own, not this package's")
	}
}
