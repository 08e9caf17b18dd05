package seqnode

import (
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes/internal/jute"
)

// TestOweKeepsTheReleaseWithinOneRequest: with a long path, a waiter owes
// only the marks that fit, with its own, in the multi that deletes its node;
// with a short one, up to MaxOwed.
func TestOweKeepsTheReleaseWithinOneRequest(t *testing.T) {
	acl := zk.WorldACL(zk.PermAll)
	for _, dirLen := range []int{10, 20 << 10, 100 << 10} {
		spec := Spec{Dir: "/" + strings.Repeat("d", dirLen), Prefix: "lock-", Shape: Exclusive}
		if err := spec.Fits(acl); err != nil {
			t.Fatalf("a %d-byte directory: %v", dirLen, err)
		}
		path := spec.Dir + "/" + ProtectedName(NewUUID(), spec.Prefix) + "0000000100"
		other := MarkOf(spec.Dir + "/" + ProtectedName(NewUUID(), spec.Prefix) + "0000000099")
		var marks []string
		for range MaxOwed + 1 {
			spec.owe(path, acl, &marks, other)
		}
		size := markedDeleteSize(path, append(marks, MarkOf(path)), acl)
		if size > jute.MaxRequest {
			t.Errorf("a %d-byte directory: %d marks owed make a %d-byte release", dirLen, len(marks), size)
		}
		more := markedDeleteSize(path, append(marks, other, MarkOf(path)), acl)
		if len(marks) < MaxOwed && more <= jute.MaxRequest {
			t.Errorf("a %d-byte directory: %d marks owed, and one more would fit", dirLen, len(marks))
		}
		if dirLen == 10 && len(marks) != MaxOwed {
			t.Errorf("a short directory owes %d marks, not MaxOwed", len(marks))
		}
		if dirLen == 100<<10 && len(marks) >= MaxOwed {
			t.Errorf("a 100 KiB directory owes all %d marks", len(marks))
		}
	}
}
