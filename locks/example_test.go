package locks_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/locks"
)

func Example() {
	ctx := context.Background()
	sess, err := recipes.Connect(ctx, zkServers())
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()

	m, err := locks.NewMutex(sess, "/examples/mutex")
	if err != nil {
		log.Fatal(err)
	}
	held, err := m.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	// Work under the lock with held: it is cancelled if the lock is lost.
	fmt.Println("working under the lock")
	if err := m.Unlock(held); err != nil {
		log.Fatal(err)
	}
	fmt.Println("released:", context.Cause(held))
	// Output:
	// working under the lock
	// released: locks: released
}

func ExampleMutex_Lock_reentrant() {
	ctx := context.Background()
	sess, err := recipes.Connect(ctx, zkServers())
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	m, err := locks.NewMutex(sess, "/examples/reentrant")
	if err != nil {
		log.Fatal(err)
	}

	outer, err := m.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	// A nested Lock with the held context re-enters without a new node.
	inner, err := m.Lock(outer)
	if err != nil {
		log.Fatal(err)
	}
	ps, _ := m.Participants(ctx)
	fmt.Println("nodes:", len(ps))
	_ = m.Unlock(inner)
	fmt.Println("still held after the inner Unlock:", outer.Err() == nil)
	_ = m.Unlock(outer)
	fmt.Println("held after the outer Unlock:", outer.Err() == nil)
	// Output:
	// nodes: 1
	// still held after the inner Unlock: true
	// held after the outer Unlock: false
}

func ExampleMutex_Token() {
	ctx := context.Background()
	sess, err := recipes.Connect(ctx, zkServers())
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	m, err := locks.NewMutex(sess, "/examples/fenced")
	if err != nil {
		log.Fatal(err)
	}

	var tokens []int64
	for range 2 {
		held, err := m.Lock(ctx)
		if err != nil {
			log.Fatal(err)
		}
		token, _ := m.Token(held) // send it with every write the lock guards
		tokens = append(tokens, token)
		_ = m.Unlock(held)
	}
	fmt.Println("the second holder's token is larger:", tokens[1] > tokens[0])
	// Output:
	// the second holder's token is larger: true
}

func ExampleMutex_Multi() {
	ctx := context.Background()
	sess, err := recipes.Connect(ctx, zkServers())
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	m, err := locks.NewMutex(sess, "/examples/guarded")
	if err != nil {
		log.Fatal(err)
	}
	held, err := m.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer m.Unlock(held)

	// Applied only if we still hold the lock when ZooKeeper runs it.
	_, err = m.Multi(held,
		&zk.CreateRequest{Path: "/examples/guarded-config", Data: []byte("v2"), Acl: zk.WorldACL(zk.PermAll)},
		&zk.DeleteRequest{Path: "/examples/guarded-config", Version: -1},
	)
	switch {
	case errors.Is(err, locks.ErrLockLost):
		fmt.Println("lost the lock; nothing applied")
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Println("applied under the lock")
	}
	// Output:
	// applied under the lock
}

func ExampleRevoke() {
	ctx := context.Background()
	sess, err := recipes.Connect(ctx, zkServers())
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	m, err := locks.NewMutex(sess, "/examples/revocable")
	if err != nil {
		log.Fatal(err)
	}
	held, err := m.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}

	// Another process asks the holder to let go...
	ps, _ := m.Participants(ctx)
	if err := locks.Revoke(ctx, sess, ps[0].Path); err != nil {
		log.Fatal(err)
	}
	// ...and the holder, watching Revoked, does.
	<-m.Revoked(held)
	fmt.Println("asked to release")
	_ = m.Unlock(held)
	// Output:
	// asked to release
}
