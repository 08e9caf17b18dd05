package locks_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/zkrecipes/recipes/internal/testenv"
)

// TestMain starts ZooKeeper for the examples, unless ZK_SERVERS names one.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(testenv.ForExamples(m))
}
