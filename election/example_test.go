package election_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/election"
	"github.com/zkrecipes/recipes/locks"
)

func ExampleLatch() {
	ctx := context.Background()
	sess, err := recipes.Connect(ctx, strings.Split(os.Getenv("ZK_SERVERS"), ","))
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()

	l, err := election.NewLatch(sess, "/examples/election/latch", "replica-1")
	if err != nil {
		log.Fatal(err)
	}
	term, err := l.Campaign(ctx) // waits until this participant leads
	if err != nil {
		log.Fatal(err)
	}
	leader, _, err := l.Leader(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("leader:", string(leader.Data))
	// Lead in term.Context(): it is cancelled if the term is lost.
	if err := term.Release(ctx); err != nil { // resign
		log.Fatal(err)
	}
	fmt.Println("resigned:", context.Cause(term.Context()))
	// Output:
	// leader: replica-1
	// resigned: locks: released
}

func ExampleRunner() {
	servers := strings.Split(os.Getenv("ZK_SERVERS"), ",")
	ctx, stop := context.WithCancel(context.Background())
	r := election.Runner{
		Connect: func(ctx context.Context) (*recipes.Session, error) {
			return recipes.Connect(ctx, servers)
		},
		Candidate: func(sess *recipes.Session) (election.Campaigner, error) {
			return election.NewSelector(sess, "/examples/election/runner", "replica-1")
		},
		Lead: func(ctx context.Context, term *locks.Hold) error {
			fmt.Println("leading")
			stop() // a real service would work until ctx ends
			<-ctx.Done()
			return nil
		},
	}
	err := r.Run(ctx)
	fmt.Println("stopped:", err)
	// Output:
	// leading
	// stopped: context canceled
}
