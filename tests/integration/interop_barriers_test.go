package integration_test

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes/barriers"
	"github.com/zkrecipes/recipes/internal/testenv/curatortest"
	"github.com/zkrecipes/recipes/internal/testenv/curatortest/eventlog"
	"github.com/zkrecipes/recipes/zktest"
)

// TestDoubleBarrierInteropWithCurator: two Go members and two Java members
// (Curator's DistributedDoubleBarrier) at one barrier of 4. The log has, per
// member, A (arrived), + B (entered), - B (leaving) and D (left): nobody
// enters before all four arrived, and nobody has left before all four
// started leaving.
func TestDoubleBarrierInteropWithCurator(t *testing.T) {
	t.Parallel()
	peer := curatortest.EnsureT(t)
	admin, root := newRoot(t)
	path := root + "/double"
	log := filepath.Join(t.TempDir(), "events")
	servers := curatortest.ServersArg(zktest.Servers(t))
	const members = 4

	var javaDone []<-chan error
	for i := range 2 {
		done, _ := interopJava(t, peer, "double-barrier", servers, path, strconv.Itoa(members), log, curatortest.ClientID(i))
		javaDone = append(javaDone, done)
	}
	var wg sync.WaitGroup
	for i := range 2 {
		b := newDoubleBarrier(t, connect(t), path, members)
		id := eventlog.GoClient(i)
		wg.Go(func() {
			must := func(err error) bool { return assert.NoError(t, err) }
			if !must(eventlog.Append(log, eventlog.Enter, "A", id)) || !must(b.Enter(bg())) ||
				!must(eventlog.Append(log, eventlog.Enter, eventlog.KindBarrier, id)) ||
				!must(eventlog.Append(log, eventlog.Leave, eventlog.KindBarrier, id)) ||
				!must(b.Leave(bg())) {
				return
			}
			must(eventlog.Append(log, eventlog.Enter, "D", id))
		})
	}
	wg.Wait()
	for _, done := range javaDone {
		require.NoError(t, <-done)
	}

	events, err := eventlog.Read(log)
	require.NoError(t, err)
	first := func(op, kind string) int {
		return slices.IndexFunc(events, func(e eventlog.Event) bool { return e.Op == op && e.Kind == kind })
	}
	lastArrival, firstEntry := lastIndex(events, eventlog.Enter, "A"), first(eventlog.Enter, eventlog.KindBarrier)
	lastLeaving, firstDone := lastIndex(events, eventlog.Leave, eventlog.KindBarrier), first(eventlog.Enter, "D")
	require.Equal(t, 4*members, len(events), "%v", events)
	assert.Less(t, lastArrival, firstEntry, "a member entered before all had arrived: %v", events)
	assert.Less(t, lastLeaving, firstDone, "a member left before all were leaving: %v", events)
	assert.Empty(t, children(t, admin, path), "members or ready left behind")
}

func lastIndex(events []eventlog.Event, op, kind string) int {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Op == op && events[i].Kind == kind {
			return i
		}
	}
	return -1
}

// TestBarrierInteropWithCurator: a Go Barrier releases Java waiters, and a
// Java barrier releases Go waiters.
func TestBarrierInteropWithCurator(t *testing.T) {
	t.Parallel()
	peer := curatortest.EnsureT(t)
	_, root := newRoot(t)
	path := root + "/gate"
	servers := curatortest.ServersArg(zktest.Servers(t))

	// Go sets, Java waits, Go removes.
	goBarrier := newBarrier(t, connect(t), path)
	t.Cleanup(func() { _ = goBarrier.Remove(bg()) }) // if the test fails half way
	require.NoError(t, goBarrier.Set(bg()))
	javaWait, _ := interopJava(t, peer, "barrier-wait", servers, path, "60000")
	eventually(t, "the Java waiter to watch", func() bool {
		out := wchp(t, zktest.Servers(t)[0])
		return countLines(out, path) >= 1
	})
	require.NoError(t, goBarrier.Remove(bg()))
	require.NoError(t, <-javaWait)

	// Java sets, Go waits, Java removes.
	_, err := peer.Run(bg(), "barrier-set", servers, path)
	require.NoError(t, err)
	up, err := goBarrier.IsSet(bg())
	require.NoError(t, err)
	require.True(t, up)
	goWait := make(chan error, 1)
	go func() { goWait <- goBarrier.Wait(bg()) }()
	_, err = peer.Run(bg(), "barrier-remove", servers, path)
	require.NoError(t, err)
	require.NoError(t, <-goWait)
}

// TestDoubleBarrierCountedMembersWithCurator: Go members carry their member
// count in their node names, which Curator neither reads nor minds: two Go
// members for 3 wait, each seeing the other agree, and a Java member for 3
// counts them and opens the barrier for all three.
func TestDoubleBarrierCountedMembersWithCurator(t *testing.T) {
	t.Parallel()
	peer := curatortest.EnsureT(t)
	admin, root := newRoot(t)
	path := root + "/double"
	log := filepath.Join(t.TempDir(), "events")
	servers := curatortest.ServersArg(zktest.Servers(t))
	const members = 3

	var wg sync.WaitGroup
	var goMembers []*barriers.DoubleBarrier
	for range 2 {
		b := newDoubleBarrier(t, connect(t), path, members)
		goMembers = append(goMembers, b)
		wg.Go(func() {
			if assert.NoError(t, b.Enter(bg())) {
				assert.NoError(t, b.Leave(bg()))
			}
		})
	}
	eventually(t, "the Go members to arrive", func() bool { return len(children(t, admin, path)) == 2 })
	for _, b := range goMembers {
		name := b.Node()[len(path)+1:]
		assert.True(t, strings.HasPrefix(name, "00000003-"), "member %s does not carry its count", name)
	}
	javaDone, _ := interopJava(t, peer, "double-barrier", servers, path, strconv.Itoa(members), log, curatortest.ClientID(0))
	require.NoError(t, <-javaDone)
	wg.Wait()
	assert.Empty(t, children(t, admin, path), "members or ready left behind")
}
