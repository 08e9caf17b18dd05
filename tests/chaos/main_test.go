package chaos_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/zkrecipes/recipes/tests/chaos"
	"github.com/zkrecipes/recipes/zktest"
)

// TestMain makes the test binary a worker process when the harness starts it
// as one; otherwise it runs the tests with a shared server, checking for
// goroutine leaks after it is stopped.
func TestMain(m *testing.M) {
	chaos.MaybeRunWorker()
	goleak.VerifyTestMain(zktest.WithServer(m))
}
