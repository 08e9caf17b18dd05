package election_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/zktest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(testenv.ForExamples(m))
}

func bg() context.Context { return context.Background() }

// newRoot returns an admin connection and a path of the test's own,
// checked for leftover nodes when the test ends.
func newRoot(t *testing.T) (*zk.Conn, string) {
	t.Helper()
	admin := zktest.Connect(t, zktest.Servers(t))
	return admin, zktest.Root(t, admin)
}

// connect opens a session to servers (the shared server's if none), closed
// when t ends.
func connect(t *testing.T, servers []string, opts ...recipes.Option) *recipes.Session {
	t.Helper()
	if servers == nil {
		servers = zktest.Servers(t)
	}
	ctx, cancel := context.WithTimeout(bg(), 30*time.Second)
	defer cancel()
	sess, err := recipes.Connect(ctx, servers, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	return sess
}
