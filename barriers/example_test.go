package barriers_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/barriers"
)

func ExampleBarrier() {
	ctx := context.Background()
	sess, err := recipes.Connect(ctx, zkServers())
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	gate, err := barriers.NewBarrier(sess, "/examples/deploy-gate")
	if err != nil {
		log.Fatal(err)
	}

	if err := gate.Set(ctx); err != nil { // hold the workers back
		log.Fatal(err)
	}
	passed := make(chan error)
	go func() { passed <- gate.Wait(ctx) }() // a worker, elsewhere
	if err := gate.Remove(ctx); err != nil { // let them go
		log.Fatal(err)
	}
	fmt.Println("worker passed:", <-passed)
	// Output:
	// worker passed: <nil>
}

func ExampleDoubleBarrier() {
	ctx := context.Background()
	sess, err := recipes.Connect(ctx, zkServers())
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()

	// Three workers (here goroutines; usually processes) start the batch
	// together and finish it together.
	var wg sync.WaitGroup
	for range 3 {
		member, err := barriers.NewDoubleBarrier(sess, "/examples/batch", 3)
		if err != nil {
			log.Fatal(err)
		}
		wg.Go(func() {
			if err := member.Enter(ctx); err != nil {
				log.Fatal(err)
			}
			// ... this worker's share of the batch ...
			if err := member.Leave(ctx); err != nil {
				log.Fatal(err)
			}
		})
	}
	wg.Wait()
	fmt.Println("all done together")
	// Output:
	// all done together
}

func ExampleInspect() {
	ctx := context.Background()
	sess, err := recipes.Connect(ctx, zkServers())
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	b, err := barriers.NewBarrier(sess, "/examples/inspected-gate", recipes.WithData([]byte("release-manager")))
	if err != nil {
		log.Fatal(err)
	}
	if err := b.Set(ctx); err != nil {
		log.Fatal(err)
	}
	uses, err := barriers.Inspect(ctx, sess, "/examples/inspected-gate")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(uses[0].Recipe, "set by", string(uses[0].Data))
	if err := b.Remove(ctx); err != nil {
		log.Fatal(err)
	}
	_, err = barriers.Inspect(ctx, sess, "/examples/inspected-gate")
	fmt.Println("after Remove:", errors.Is(err, zk.ErrNoNode))
	// Output:
	// barrier set by release-manager
	// after Remove: true
}
