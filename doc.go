// Package recipes holds the [Session] that every zkrecipes recipe works in:
// one ZooKeeper session, its connection, and the knowledge of when it has
// ended. [Connect] makes one; [NewSession] wraps a connection you have.
//
// The recipes themselves are in the subpackages: locks (Mutex, RWMutex,
// Semaphore, SemaphoreMutex, MultiLock: Curator's lock recipes, each acquire
// returning a locks.Hold), barriers (Barrier, DoubleBarrier) and election
// (Latch, Selector: Curator's LeaderLatch and LeaderSelector, each term a
// locks.Hold; Runner, the loop a service runs). They are wire-compatible
// with Apache Curator 5.x, so Go and Java processes can share lock paths,
// barriers and elections. Package zktest is the test kit: real ZooKeeper
// servers, and the faults code must survive (expired sessions, partitions),
// for the tests of code that uses them.
//
//	sess, err := recipes.Connect(ctx, []string{"zk1:2181", "zk2:2181"})
//	if err != nil { ... }
//	defer sess.Close()
//	m, err := locks.NewMutex(sess, "/jobs/nightly")
//	h, err := m.Lock(ctx)
//	if err != nil { ... }
//	defer h.Release(context.Background())
//	// h.Context() is cancelled, with cause locks.ErrLockLost, if the lock is lost.
//
// # Session states
//
// A session starts connected. When its connection drops it is suspended: the
// session may still be alive on the server, and locks held in it may still be
// held, but nobody can be sure. If the connection comes back within the session
// timeout, it is reconnected and nothing was lost. If ZooKeeper reports the
// session expired, or, while a recipe holds, waits or acquires on it, the
// session has gone so long without proof that the leader heard from it that
// the leader may expire it soon, the session ends (Done is closed) and every
// lock it held is lost. The second case is decided by a client-side deadline
// that runs whether or not the connection looks healthy, so that a holder
// learns of its loss before the server can give its lock away; see Session
// for how, and docs/semantics.md for the exact conditions. A session on which
// nothing is held or waited for ends when its connection has been down for
// the whole session timeout, as Curator's LOST.
//
// A Session never silently moves to a new ZooKeeper session: once it ends,
// make a new one.
//
// # Production settings
//
// The options of [Connect] cover what a deployment needs besides the recipes:
// [WithAuth] and [WithACL] (with [CreatorOnly]) so that no other client can
// join, inspect or delete a service's locks, and [WithParentACL] for the
// parents created above them, which by default other services may create
// beside but not delete; [WithTLS] for the servers'
// secureClientPort; [WithChroot] (or "host:port/app" server strings) to keep
// services apart; [WithSlog] and [WithMeterProvider] for logs and
// OpenTelemetry metrics; [WithStateListener] for the session's states.
// Every node a recipe creates is shaped by a [NodeOption] ([WithData]).
package recipes
