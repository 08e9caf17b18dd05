package integration_test

import (
	"context"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes/internal/testenv/curatortest"
	"github.com/zkrecipes/recipes/internal/testenv/curatortest/eventlog"
	"github.com/zkrecipes/recipes/locks"
	"github.com/zkrecipes/recipes/zktest"
)

// interopHold is how long every holder, Go or Java, keeps the lock.
const interopHold = 5 * time.Millisecond

// goHolder is one Go client of an interop test: it logs kind around each
// hold.
type goHolder struct {
	kind string
	lock func(context.Context) (*locks.Hold, error)
}

// interop runs the Java processes (CuratorPeer argument lists, which must
// log to log) and, once the first of them has entered, the Go holders, each
// for iterations rounds; it returns the log, with every entry checked to have
// been left.
func interop(t *testing.T, log string, java [][]string, holders []goHolder, iterations int) []eventlog.Event {
	t.Helper()
	peer := curatortest.EnsureT(t)
	var javaDone []<-chan error
	for _, args := range java {
		done, _ := interopJava(t, peer, args...)
		javaDone = append(javaDone, done)
	}
	// Join while Java is at it, so that the languages interleave.
	interopLogged(t, log, curatortest.ClientID(0))

	ctx, cancel := context.WithTimeout(bg(), waitLong)
	defer cancel()
	errs := make(chan error, len(holders))
	var wg sync.WaitGroup
	for i, h := range holders {
		id := eventlog.GoClient(i)
		wg.Go(func() {
			for range iterations {
				held, err := h.lock(ctx)
				if err != nil {
					errs <- err
					return
				}
				err = eventlog.Append(log, eventlog.Enter, h.kind, id)
				time.Sleep(interopHold) // the work done under the lock
				if err == nil {
					err = eventlog.Append(log, eventlog.Leave, h.kind, id)
				}
				if uerr := held.Release(bg()); err == nil {
					err = uerr
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, done := range javaDone {
		require.NoError(t, <-done)
	}
	events, err := eventlog.Read(log)
	require.NoError(t, err)
	return events
}

// javaArgs is a CuratorPeer argument list for client i: mode, servers,
// path, then extra, then iterations, hold, log and client, each hold lasting
// interopHold.
func javaArgs(t *testing.T, i int, mode, path, log string, iterations int, extra ...string) []string {
	t.Helper()
	return peerArgs(t, i, mode, path, log, iterations, interopHold, extra...)
}

// peerArgs is javaArgs with each hold lasting hold.
func peerArgs(t *testing.T, i int, mode, path, log string, iterations int, hold time.Duration, extra ...string) []string {
	t.Helper()
	args := []string{mode, curatortest.ServersArg(zktest.Servers(t)), path}
	args = append(args, extra...)
	return append(args, strconv.Itoa(iterations), strconv.Itoa(int(hold/time.Millisecond)), log, curatortest.ClientID(i))
}

// TestRWMutexInteropWithCurator: Go RWMutex and Curator's
// InterProcessReadWriteLock on one path, all contending at random. Writers,
// from either language, are always alone. That readers share across the
// languages is TestRWMutexReadersShareWithCurator's: here it is up to chance.
func TestRWMutexInteropWithCurator(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	path := root + "/rw"
	log := filepath.Join(t.TempDir(), "events")
	const iterations = 15
	java := [][]string{
		javaArgs(t, 0, "read", path, log, iterations),
		javaArgs(t, 1, "read", path, log, iterations),
		javaArgs(t, 2, "write", path, log, iterations),
	}
	var holders []goHolder
	for _, write := range []bool{false, false, true} {
		rw := newRWMutex(t, connect(t), path)
		h := goHolder{eventlog.KindRead, rw.RLock}
		if write {
			h = goHolder{eventlog.KindWrite, rw.Lock}
		}
		holders = append(holders, h)
	}
	events := interop(t, log, java, holders, iterations)
	stats, err := eventlog.Check(events, map[string]int{eventlog.KindWrite: 1}, eventlog.KindWrite)
	require.NoError(t, err)
	assert.Equal(t, 4*iterations, stats[eventlog.KindRead].Entries)
	assert.Equal(t, 2*iterations, stats[eventlog.KindWrite].Entries)
}

// TestRWMutexReadersShareWithCurator: a Curator reader takes the read lock
// while a Go reader holds it, and a Go reader takes it while a Curator
// reader holds it.
func TestRWMutexReadersShareWithCurator(t *testing.T) {
	t.Parallel()
	peer := curatortest.EnsureT(t)
	_, root := newRoot(t)
	path := root + "/rw"
	log := filepath.Join(t.TempDir(), "events")
	rw := newRWMutex(t, connect(t), path)
	ctx, cancel := context.WithTimeout(bg(), waitLong)
	defer cancel()

	// Java reads, in and out, under a Go read hold.
	goHeld, err := rw.RLock(ctx)
	require.NoError(t, err)
	curatorEntersUnder(ctx, t, goHeld, peerArgs(t, 0, "read", path, log, 1, 0))
	require.NoError(t, goHeld.Release(bg()))

	// Go reads under a Java read hold, which lasts until we stop it.
	javaDone, stopJava := interopJava(t, peer, peerArgs(t, 1, "read", path, log, 1, waitLong)...)
	interopLogged(t, log, curatortest.ClientID(1))
	goHeld, err = rw.RLock(ctx)
	require.NoError(t, err, "a Go reader under a Curator reader")
	events, err := eventlog.Read(log)
	require.NoError(t, err)
	assert.Equal(t, eventlog.Enter, events[len(events)-1].Op, "the Curator reader left before the Go reader entered")
	require.NoError(t, goHeld.Release(bg()))
	stopJava()
	<-javaDone // stopped, so it fails; its shutdown hook closes its session
}

// curatorEntersUnder runs the CuratorPeer with args, which must enter and
// leave once, and fails t unless it does so while held lasts.
func curatorEntersUnder(ctx context.Context, t *testing.T, held *locks.Hold, args []string) {
	t.Helper()
	done, _ := interopJava(t, curatortest.EnsureT(t), args...)
	select {
	case err := <-done:
		require.NoError(t, err, "the Curator client under a Go hold")
	case <-ctx.Done():
		t.Fatal("the Curator client waited for a Go hold it should share")
	}
	select {
	case <-held.Done():
		t.Fatalf("the Go hold ended: %v", held.Err())
	default:
	}
}

// TestSemaphoreMutexInteropWithCurator: Go SemaphoreMutex and Curator's
// InterProcessSemaphoreMutex exclude each other.
func TestSemaphoreMutexInteropWithCurator(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	path := root + "/sm"
	log := filepath.Join(t.TempDir(), "events")
	const iterations = 10
	java := [][]string{
		javaArgs(t, 0, "semaphore-mutex", path, log, iterations),
		javaArgs(t, 1, "semaphore-mutex", path, log, iterations),
	}
	var holders []goHolder
	for range 2 {
		m, err := locks.NewSemaphoreMutex(connect(t), path)
		require.NoError(t, err)
		holders = append(holders, goHolder{eventlog.KindMutex, m.Lock})
	}
	events := interop(t, log, java, holders, iterations)
	stats, err := eventlog.Check(events, map[string]int{eventlog.KindMutex: 1})
	require.NoError(t, err)
	assert.Equal(t, 4*iterations, stats[eventlog.KindMutex].Entries)
}

// TestSemaphoreInteropWithCurator: Go Semaphore and Curator's
// InterProcessSemaphoreV2 share one count of 3 leases: a Curator client
// takes a lease while a Go client holds one, and at most 3 are ever held.
func TestSemaphoreInteropWithCurator(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	path := root + "/sem"
	log := filepath.Join(t.TempDir(), "events")
	const iterations, leases = 10, 3
	ctx, cancel := context.WithTimeout(bg(), waitLong)
	defer cancel()
	lease, err := leaseLocker{newSemaphore(t, connect(t), path, leases)}.Lock(ctx)
	require.NoError(t, err)
	curatorEntersUnder(ctx, t, lease, peerArgs(t, 0, "semaphore", path, log+"-shared", 1, 0, strconv.Itoa(leases)))
	require.NoError(t, lease.Release(bg()))

	var java [][]string
	for i := range 3 {
		java = append(java, javaArgs(t, i, "semaphore", path, log, iterations, strconv.Itoa(leases)))
	}
	var holders []goHolder
	for range 3 {
		l := leaseLocker{newSemaphore(t, connect(t), path, leases)}
		holders = append(holders, goHolder{eventlog.KindLease, l.Lock})
	}
	events := interop(t, log, java, holders, iterations)
	stats, err := eventlog.Check(events, map[string]int{eventlog.KindLease: leases})
	require.NoError(t, err)
	assert.Equal(t, 6*iterations, stats[eventlog.KindLease].Entries)
}

// TestMultiLockInteropWithCurator: Go MultiLock and Curator's
// InterProcessMultiLock over the same two paths exclude each other. Curator
// takes its paths in the order given, so Java is given them in path order;
// Go is given them reversed and sorts them itself.
func TestMultiLockInteropWithCurator(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	a, b := root+"/a", root+"/b"
	log := filepath.Join(t.TempDir(), "events")
	const iterations = 10
	java := [][]string{
		javaArgs(t, 0, "multilock", a+","+b, log, iterations),
		javaArgs(t, 1, "multilock", a+","+b, log, iterations),
	}
	var holders []goHolder
	for range 2 {
		ml, err := locks.NewMultiMutex(connect(t), []string{b, a})
		require.NoError(t, err)
		holders = append(holders, goHolder{eventlog.KindMutex, ml.Lock})
	}
	events := interop(t, log, java, holders, iterations)
	stats, err := eventlog.Check(events, map[string]int{eventlog.KindMutex: 1})
	require.NoError(t, err)
	assert.Equal(t, 4*iterations, stats[eventlog.KindMutex].Entries)
}
