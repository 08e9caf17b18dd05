package locks_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/locks"
)

func Example() {
	ctx := context.Background()
	sess, err := recipes.Connect(ctx, strings.Split(os.Getenv("ZK_SERVERS"), ","))
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()

	m, err := locks.NewMutex(sess, "/examples/mutex")
	if err != nil {
		log.Fatal(err)
	}
	// The deadline bounds the wait for the lock, not the hold.
	wait, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	h, err := m.Lock(wait)
	if err != nil {
		log.Fatal(err)
	}
	// Work in h.Context(): it is cancelled if the lock is lost.
	work := h.Context()
	fmt.Println("working under the lock:", work.Err() == nil)
	if err := h.Release(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("released:", context.Cause(work))
	// Output:
	// working under the lock: true
	// released: locks: released
}

func ExampleMutex_Lock_reentrant() {
	ctx := context.Background()
	sess, err := recipes.Connect(ctx, strings.Split(os.Getenv("ZK_SERVERS"), ","))
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
	// A nested Lock with the hold's context re-enters without a new node.
	inner, err := m.Lock(outer.Context())
	if err != nil {
		log.Fatal(err)
	}
	ps, _ := m.Participants(ctx)
	fmt.Println("nodes:", len(ps), "same hold:", inner == outer)
	_ = inner.Release(ctx)
	fmt.Println("still held after the inner Release:", outer.Err() == nil)
	_ = outer.Release(ctx)
	fmt.Println("held after the outer Release:", outer.Err() == nil)
	// Output:
	// nodes: 1 same hold: true
	// still held after the inner Release: true
	// held after the outer Release: false
}

func ExampleHold_Token() {
	ctx := context.Background()
	sess, err := recipes.Connect(ctx, strings.Split(os.Getenv("ZK_SERVERS"), ","))
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
		h, err := m.Lock(ctx)
		if err != nil {
			log.Fatal(err)
		}
		tokens = append(tokens, h.Token()) // send it with every write the lock guards
		_ = h.Release(ctx)
	}
	fmt.Println("the second holder's token is larger:", tokens[1] > tokens[0])
	// Output:
	// the second holder's token is larger: true
}

func ExampleHold_Multi() {
	ctx := context.Background()
	sess, err := recipes.Connect(ctx, strings.Split(os.Getenv("ZK_SERVERS"), ","))
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	m, err := locks.NewMutex(sess, "/examples/guarded")
	if err != nil {
		log.Fatal(err)
	}
	h, err := m.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Release(ctx)

	// Applied only if we still hold the lock when ZooKeeper runs it.
	_, err = h.Multi(ctx,
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
	sess, err := recipes.Connect(ctx, strings.Split(os.Getenv("ZK_SERVERS"), ","))
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	m, err := locks.NewMutex(sess, "/examples/revocable")
	if err != nil {
		log.Fatal(err)
	}
	h, err := m.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}

	// Another process asks the holder to let go...
	ps, _ := m.Participants(ctx)
	if err := locks.Revoke(ctx, sess, ps[0].Path); err != nil {
		log.Fatal(err)
	}
	// ...and the holder, watching Revoked, does.
	<-h.Revoked()
	fmt.Println("asked to release")
	_ = h.Release(ctx)
	// Output:
	// asked to release
}

func ExampleRWMutex() {
	ctx := context.Background()
	sess, err := recipes.Connect(ctx, strings.Split(os.Getenv("ZK_SERVERS"), ","))
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
	ps, _ := rw.Participants(ctx)
	fmt.Println("participants:", len(ps), ps[0].Kind, ps[0].Holds, ps[1].Kind, ps[1].Holds)
	_ = r1.Release(ctx)
	_ = r2.Release(ctx)

	// A writer downgrades: it takes the read lock with its hold's context,
	// then lets the write lock go, and no other writer can slip in between.
	w, _ := rw.Lock(ctx)
	r, _ := rw.RLock(w.Context())
	_ = w.Release(ctx)
	fmt.Println("still reading:", r.Err() == nil)

	// A reader cannot upgrade.
	_, err = rw.Lock(r.Context())
	fmt.Println(errors.Is(err, locks.ErrUpgrade))
	_ = r.Release(ctx)
	// Output:
	// participants: 2 read true read true
	// still reading: true
	// true
}

func ExampleSemaphore() {
	ctx := context.Background()
	sess, err := recipes.Connect(ctx, strings.Split(os.Getenv("ZK_SERVERS"), ","))
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
	sess, err := recipes.Connect(ctx, strings.Split(os.Getenv("ZK_SERVERS"), ","))
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	m, err := locks.NewSemaphoreMutex(sess, "/examples/semaphore-mutex")
	if err != nil {
		log.Fatal(err)
	}
	h, err := m.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	_, err = m.Lock(h.Context()) // not reentrant: fails at once instead of waiting forever
	fmt.Println(errors.Is(err, locks.ErrReentrant))

	done := make(chan error)
	go func() { done <- h.Release(ctx) }() // any goroutine may release it
	fmt.Println(<-done)
	// Output:
	// true
	// <nil>
}

func ExampleMultiLock() {
	ctx := context.Background()
	sess, err := recipes.Connect(ctx, strings.Split(os.Getenv("ZK_SERVERS"), ","))
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	accounts, _ := locks.NewMutex(sess, "/examples/accounts/42")
	ledger, _ := locks.NewRWMutex(sess, "/examples/ledger")

	// Waited for in path order whatever the order given, so two transfers
	// that name the same locks differently cannot deadlock.
	ml, err := locks.NewMultiLock(ledger, accounts)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ml.Path())
	h, err := ml.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	// ... move money in h.Context(), cancelled if any of the locks is
	// lost, fencing each store with its own lock's token.
	for _, m := range h.Members() {
		fmt.Println(m.Path(), "token > 0:", m.Token() > 0)
	}
	fmt.Println("the multi-lock's own token:", h.Token()) // none: no one number fences every store
	fmt.Println(h.Release(ctx))
	// Output:
	// /examples/accounts/42,/examples/ledger
	// /examples/accounts/42 token > 0: true
	// /examples/ledger token > 0: true
	// the multi-lock's own token: 0
	// <nil>
}

func ExampleInspect() {
	ctx := context.Background()
	sess, err := recipes.Connect(ctx, strings.Split(os.Getenv("ZK_SERVERS"), ","))
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	rw, err := locks.NewRWMutex(sess, "/examples/inspect")
	if err != nil {
		log.Fatal(err)
	}
	r, err := rw.RLock(ctx)
	if err != nil {
		log.Fatal(err)
	}

	// What a tool that knows nothing of the path sees there.
	uses, err := locks.Inspect(ctx, sess, "/examples/inspect")
	if err != nil {
		log.Fatal(err)
	}
	for _, u := range uses {
		for _, p := range u.Participants {
			fmt.Println(u.Recipe, p.Kind, "holds:", p.Holds, "ours:", p.Path == r.Node())
		}
	}
	_ = r.Release(ctx)
	// Output:
	// rwlock read holds: true ours: true
}
