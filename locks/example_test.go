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

func ExampleRWMutex() {
	ctx := context.Background()
	sess, err := recipes.Connect(ctx, zkServers())
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	rw, err := locks.NewRWMutex(sess, "/examples/config")
	if err != nil {
		log.Fatal(err)
	}

	// Readers share the lock.
	r1, _ := rw.RLock(ctx)
	r2, _ := rw.RLock(ctx)
	readers, writers, _ := rw.Participants(ctx)
	fmt.Println("readers:", len(readers), "writers:", len(writers))
	_ = rw.RUnlock(r1)
	_ = rw.RUnlock(r2)

	// A writer downgrades: it takes the read lock, then lets the write
	// lock go, and no other writer can slip in between.
	w, _ := rw.Lock(ctx)
	r, _ := rw.RLock(w)
	_ = rw.Unlock(w)
	fmt.Println("still reading:", r.Err() == nil)

	// A reader cannot upgrade.
	_, err = rw.Lock(r)
	fmt.Println(errors.Is(err, locks.ErrUpgrade))
	_ = rw.RUnlock(r)
	// Output:
	// readers: 2 writers: 0
	// still reading: true
	// true
}

func ExampleSemaphore() {
	ctx := context.Background()
	sess, err := recipes.Connect(ctx, zkServers())
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	sem, err := locks.NewSemaphore(sess, "/examples/connections", 3)
	if err != nil {
		log.Fatal(err)
	}

	leases, err := sem.Acquire(ctx, 2) // two of the three, or none
	if err != nil {
		log.Fatal(err)
	}
	_, ok, _ := sem.TryAcquire(ctx, 2)
	fmt.Println("two more free:", ok)
	for _, l := range leases {
		_ = l.Release(ctx) // each lease on its own, from any goroutine
	}
	// Output:
	// two more free: false
}

func ExampleSemaphoreMutex() {
	ctx := context.Background()
	sess, err := recipes.Connect(ctx, zkServers())
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	m, err := locks.NewSemaphoreMutex(sess, "/examples/semaphore-mutex")
	if err != nil {
		log.Fatal(err)
	}
	held, err := m.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	_, err = m.Lock(held) // not reentrant: fails at once instead of waiting forever
	fmt.Println(errors.Is(err, locks.ErrReentrant))

	done := make(chan error)
	go func() { done <- m.Unlock(held) }() // any goroutine may release it
	fmt.Println(<-done)
	// Output:
	// true
	// <nil>
}

func ExampleMultiLock() {
	ctx := context.Background()
	sess, err := recipes.Connect(ctx, zkServers())
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	accounts, _ := locks.NewMutex(sess, "/examples/accounts/42")
	ledger, _ := locks.NewRWMutex(sess, "/examples/ledger")

	// Taken in path order whatever the order given, so two transfers that
	// name the same locks differently cannot deadlock.
	ml, err := locks.NewMultiLock(ledger, accounts)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ml.Path())
	held, err := ml.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	// ... move money; held is cancelled if any of the locks is lost.
	fmt.Println(ml.Unlock(held))
	// Output:
	// /examples/accounts/42,/examples/ledger
	// <nil>
}
