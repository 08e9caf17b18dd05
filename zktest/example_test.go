package zktest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/election"
	"github.com/zkrecipes/recipes/locks"
	"github.com/zkrecipes/recipes/zktest"
)

// A test that expires the session of a lock's holder, as Curator's
// KillSession does, and sees the hold end. examples/testkit runs it.
func ExampleExpireSession() {
	lockLost := func(t *testing.T) {
		srv := zktest.Start(t)
		admin := zktest.Connect(t, srv.Servers())
		root := zktest.Root(t, admin)
		sess, err := recipes.Connect(context.Background(), srv.Servers())
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		m, err := locks.NewMutex(sess, root+"/lock")
		if err != nil {
			t.Fatal(err)
		}
		held, err := m.Lock(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		zktest.ExpireSession(t, sess.ID())
		<-held.Done()
		if !errors.Is(held.Err(), locks.ErrLockLost) {
			t.Fatalf("hold ended with %v", held.Err())
		}
	}
	_ = lockLost
}

// A test that expires the session of an election.Runner's term, reached
// through the term itself (locks.Hold's Session), and sees the Runner lead
// again, in a new session, with a larger fencing token.
func ExampleExpireSession_runner() {
	failover := func(t *testing.T) {
		admin := zktest.Connect(t, zktest.Servers(t))
		root := zktest.Root(t, admin)
		servers := zktest.Servers(t)
		terms := make(chan *locks.Hold)
		r := election.Runner{
			Connect: func(ctx context.Context) (*recipes.Session, error) {
				return recipes.Connect(ctx, servers)
			},
			Candidate: func(sess *recipes.Session) (election.Campaigner, error) {
				return election.NewLatch(sess, root+"/leader", "replica-1")
			},
			Lead: func(ctx context.Context, term *locks.Hold) error {
				select {
				case terms <- term: // to the test
				case <-ctx.Done():
				}
				<-ctx.Done() // lead until the term ends
				return nil
			},
		}
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		defer func() { stop(); <-done }()

		first := <-terms
		zktest.ExpireSession(t, first.Session().ID())
		second := <-terms // the Runner made a new session and won again
		if !errors.Is(first.Err(), locks.ErrLockLost) || second.Token() <= first.Token() {
			t.Fatalf("first term %d ended with %v; second term %d", first.Token(), first.Err(), second.Token())
		}
	}
	_ = failover
}

// A test that cuts one client off from the server and heals it.
func ExampleProxy() {
	partitioned := func(t *testing.T) {
		p := zktest.NewProxy(t, zktest.Servers(t)...)
		sess, err := recipes.Connect(context.Background(), p.Servers())
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		p.Cut() // sess hears nothing from here on: it suspends, then is lost
		// ... what must hold while it is cut off ...
		p.Heal()
	}
	_ = partitioned
}

// A package whose tests share one server, stopped when they end.
func ExampleMain() {
	var m *testing.M // TestMain's
	zktest.Main(m)
}
