package testkit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"example.com/testkit"
	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/locks"
	"github.com/zkrecipes/recipes/zktest"
)

// TestMain stops the server that zktest.Servers shares among the tests.
func TestMain(m *testing.M) { zktest.Main(m) }

// connect opens a session to servers, closed when t ends.
func connect(t *testing.T, servers []string) *recipes.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := recipes.Connect(ctx, servers)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	return sess
}

// TestJobStopsWhenItsSessionExpires: a server of the test's own; the job's
// session expires while it runs; the job is told through its context, and
// RunExclusive reports the loss.
func TestJobStopsWhenItsSessionExpires(t *testing.T) {
	srv := zktest.Start(t)
	admin := zktest.Connect(t, srv.Servers())
	root := zktest.Root(t, admin) // checked for leftover nodes at the end
	sess := connect(t, srv.Servers())

	err := testkit.RunExclusive(context.Background(), sess, root+"/job", func(ctx context.Context) error {
		zktest.ExpireSession(t, sess.ID())
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(time.Minute):
			return errors.New("the job was not stopped")
		}
	})
	if !errors.Is(err, locks.ErrLockLost) {
		t.Fatalf("RunExclusive = %v, want the lock lost", err)
	}
	if !errors.Is(err, recipes.ErrSessionExpired) {
		t.Fatalf("RunExclusive = %v, want the session expired", err)
	}
}

// TestJobWaitsItsTurn: on the shared server, a second RunExclusive waits
// for the first; a client cut off by a Proxy loses the lock to it once
// its session times out.
func TestJobWaitsItsTurn(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	p := zktest.NewProxy(t, zktest.Servers(t)...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cut, err := recipes.Connect(ctx, p.Servers(), recipes.WithSessionTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cut.Close() })
	other := connect(t, zktest.Servers(t))

	started := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- testkit.RunExclusive(ctx, cut, root+"/job", func(ctx context.Context) error {
			close(started)
			<-ctx.Done()
			return context.Cause(ctx)
		})
	}()
	<-started
	p.Cut()
	ran := false
	if err := testkit.RunExclusive(ctx, other, root+"/job", func(context.Context) error { ran = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if !ran {
		t.Fatal("the second job did not run")
	}
	if err := <-first; !errors.Is(err, locks.ErrLockLost) {
		t.Fatalf("the cut-off job = %v, want the lock lost", err)
	}
	p.Heal()
}
