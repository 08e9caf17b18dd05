package main_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes/zktest"
)

// enterLeave is a command that logs "+ pid" and "- pid" around a pause.
const enterLeave = `echo "+ $$" >> "$1"; sleep 0.2; echo "- $$" >> "$1"`

// meet is a command that logs "+ pid", waits until the log ($1) has $2
// entries, and logs "- pid"; it gives up with status 3 after 30 s. Two
// commands that must both be inside at once for either to leave show that
// the lock let them in together, whatever the timing.
const meet = `echo "+ $$" >> "$1"; i=0
while [ "$(grep -c '^+' "$1")" -lt "$2" ]; do
	i=$((i+1)); [ "$i" -ge 600 ] && exit 3; sleep 0.05
done
echo "- $$" >> "$1"`

// runAll runs the argument lists as concurrent zkrecipes invocations and
// returns their exit codes and stderr.
func runAll(t *testing.T, invocations ...[]string) ([]int, []string) {
	t.Helper()
	codes, stderrs := make([]int, len(invocations)), make([]string, len(invocations))
	var wg sync.WaitGroup
	for i, args := range invocations {
		wg.Go(func() { codes[i], _, stderrs[i] = zkrecipes(t, args...) })
	}
	wg.Wait()
	return codes, stderrs
}

// peak replays an enterLeave or meet log and returns the most commands
// inside at once.
func peak(t *testing.T, log string) (most, entries int) {
	t.Helper()
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	inside := 0
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(line, "+") {
			inside++
			entries++
		} else {
			inside--
		}
		most = max(most, inside)
	}
	return most, entries
}

func TestRLockSharesWLockExcludes(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/rw"
	log := filepath.Join(t.TempDir(), "log")
	// Two readers, each waiting inside for the other: status 3 if one
	// waited in vain.
	reader := []string{"rlock", path, "--", "sh", "-c", meet, "sh", log, "2"}
	codes, stderrs := runAll(t, reader, reader)
	assert.Equal(t, []int{0, 0}, codes, "%q", stderrs)
	most, entries := peak(t, log)
	assert.Equal(t, 2, entries)
	assert.Equal(t, 2, most)

	// The writer was alone: replay again, tracking who was inside.
	wlog := filepath.Join(t.TempDir(), "wlog")
	writer := []string{"wlock", path, "--", "sh", "-c", `echo "+ W" >> "$1"; sleep 0.2; echo "- W" >> "$1"`, "sh", wlog}
	reader = []string{"rlock", path, "--", "sh", "-c", `echo "+ R" >> "$1"; sleep 0.2; echo "- R" >> "$1"`, "sh", wlog}
	codes, _ = runAll(t, reader, writer, reader, writer, reader)
	assert.Equal(t, []int{0, 0, 0, 0, 0}, codes)
	b, err := os.ReadFile(wlog)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i, line := range lines {
		if line == "+ W" {
			require.Less(t, i+1, len(lines))
			assert.Equal(t, "- W", lines[i+1], "someone entered while the writer was inside: %q", lines)
		}
	}
}

func TestSemaphoreCommandBoundsConcurrency(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/sem"
	log := filepath.Join(t.TempDir(), "log")
	// The first two in wait for each other, so two are inside at once.
	args := []string{"semaphore", path, "--leases", "2", "--", "sh", "-c", meet, "sh", log, "2"}
	codes, stderrs := runAll(t, args, args, args, args)
	assert.Equal(t, []int{0, 0, 0, 0}, codes, "%q", stderrs)
	most, entries := peak(t, log)
	assert.Equal(t, 4, entries)
	assert.Equal(t, 2, most)

	code, _, stderr := zkrecipes(t, "semaphore", path, "--", "true")
	assert.Equal(t, 64, code, "missing --leases")
	assert.Contains(t, stderr, "--leases")
}

func TestSemaphoreMutexAndMultilockCommands(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	log := filepath.Join(t.TempDir(), "log")
	sm := []string{"semaphore-mutex", root + "/sm", "--", "sh", "-c", enterLeave, "sh", log}
	codes, _ := runAll(t, sm, sm, sm)
	assert.Equal(t, []int{0, 0, 0}, codes)
	most, _ := peak(t, log)
	assert.Equal(t, 1, most)

	// Opposite orders of the same two paths: no deadlock, no overlap.
	mlog := filepath.Join(t.TempDir(), "mlog")
	ab := []string{"multilock", root + "/a," + root + "/b", "--", "sh", "-c", enterLeave, "sh", mlog}
	ba := []string{"multilock", root + "/b," + root + "/a", "--", "sh", "-c", enterLeave, "sh", mlog}
	codes, stderrs := runAll(t, ab, ba, ab, ba)
	assert.Equal(t, []int{0, 0, 0, 0}, codes, "%q", stderrs)
	most, entries := peak(t, mlog)
	assert.Equal(t, 1, most)
	assert.Equal(t, 4, entries)

	code, _, _ := zkrecipes(t, "multilock", root+"/a,relative", "--", "true")
	assert.Equal(t, 64, code)
}

// TestMultilockPassesEachMembersToken: a multilock's command gets every
// member's fencing token in ZKRECIPES_FENCING_TOKENS, in path order, each the
// one its member's next holder outgrows, and no ZKRECIPES_FENCING_TOKEN (no
// one number fences every member); a single lock's gets its own in both.
func TestMultilockPassesEachMembersToken(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	const show = `echo "$ZKRECIPES_LOCK_PATH ${ZKRECIPES_FENCING_TOKEN-unset} $ZKRECIPES_FENCING_TOKENS"`
	code, stdout, stderr := zkrecipes(t, "multilock", root+"/b,"+root+"/a", "--", "sh", "-c", show)
	require.Equal(t, 0, code, stderr)
	fields := strings.Fields(stdout)
	require.Len(t, fields, 3, stdout)
	assert.Equal(t, root+"/a,"+root+"/b", fields[0])
	assert.Equal(t, "unset", fields[1], "a multilock's ZKRECIPES_FENCING_TOKEN")
	pairs := strings.Split(fields[2], ",")
	require.Len(t, pairs, 2, fields[2])
	var tokens []int64
	for i, want := range []string{root + "/a", root + "/b"} {
		path, tok, ok := strings.Cut(pairs[i], "=")
		require.True(t, ok, pairs[i])
		assert.Equal(t, want, path)
		n, err := strconv.ParseInt(tok, 10, 64)
		require.NoError(t, err)
		assert.Positive(t, n, "%s's token", path)
		tokens = append(tokens, n)
	}
	assert.NotEqual(t, tokens[0], tokens[1], "each member's own token")
	assert.Contains(t, stderr, "(fencing tokens "+fields[2]+")", "the acquired line names every member's token")
	code, help, _ := zkrecipes(t, "multilock", "--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, strings.Join(strings.Fields(help), " "), "a multilock's has no ZKRECIPES_FENCING_TOKEN")

	// The next holder of each member has a larger token than the multilock
	// had for that member.
	for i, p := range []string{root + "/a", root + "/b"} {
		code, stdout, stderr = zkrecipes(t, "lock", p, "--", "sh", "-c", show)
		require.Equal(t, 0, code, stderr)
		fields = strings.Fields(stdout)
		require.Len(t, fields, 3, stdout)
		assert.Equal(t, p+"="+fields[1], fields[2])
		n, err := strconv.ParseInt(fields[1], 10, 64)
		require.NoError(t, err)
		assert.Greater(t, n, tokens[i], "%s's next holder's token", p)
	}
}

func TestInspectKnowsEveryLayout(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	for _, c := range []struct {
		sub  []string
		path string
		typ  string
		kind string
	}{
		{[]string{"rlock"}, root + "/rw", "rwlock", "read"},
		{[]string{"semaphore", "--leases", "3"}, root + "/sem", "semaphore", "lease"},
		{[]string{"semaphore-mutex"}, root + "/sm", "semaphore", "lease"},
	} {
		args := append(append([]string{}, c.sub[0], c.path), c.sub[1:]...)
		holder := command(t, append(append(args, "--data", "holder-"+c.typ, "--"), "sleep", "30")...)
		require.NoError(t, holder.Start())
		waitHeld(t, c.path)
		code, stdout, stderr := zkrecipes(t, "inspect", "--json", c.path)
		stop(holder)
		require.Equal(t, 0, code, stderr)
		var got struct {
			Type    string
			Holders []struct{ Kind, Data string }
		}
		require.NoError(t, json.Unmarshal([]byte(stdout), &got), stdout)
		assert.Equal(t, c.typ, got.Type)
		require.Len(t, got.Holders, 1, stdout)
		assert.Equal(t, c.kind, got.Holders[0].Kind)
		assert.Equal(t, "holder-"+c.typ, got.Holders[0].Data)
	}
	code, stdout, _ := zkrecipes(t, "inspect", root+"/nothing-here")
	assert.Equal(t, 1, code, "a missing path")
	assert.Equal(t, root+"/nothing-here: does not exist\n", stdout)
	code, stdout, _ = zkrecipes(t, "inspect", "--json", root+"/nothing-here")
	assert.Equal(t, 1, code, "a missing path")
	var missing struct{ Type string }
	require.NoError(t, json.Unmarshal([]byte(stdout), &missing), stdout)
	assert.Equal(t, "missing", missing.Type)
}

// startHolding runs zkrecipes with args and a command that says when it
// runs, and returns once it does: the lock is held, not merely queued (a
// lock still reading its first listing would refuse a path that another
// recipe's nodes join meanwhile).
func startHolding(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	p := command(t, append(args, "--", "sh", "-c", "echo holding; exec sleep 30")...)
	out, err := p.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, p.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "the command never ran")
	require.Equal(t, "holding\n", line)
	return p
}

// waitHeld waits until inspect reports a holder at path.
func waitHeld(t *testing.T, path string) {
	t.Helper()
	eventually(t, func() bool {
		_, stdout, _ := zkrecipes(t, "inspect", "--json", path)
		return strings.Contains(stdout, `"holder": {`)
	})
}

// TestInspectShowsAMixedPath: a mutex held by zkrecipes and a semaphore
// lease made by a client that does not check (an older one, or Curator) on
// one path: inspect shows both, and says they do not exclude each other.
func TestInspectShowsAMixedPath(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/p"
	holder := startHolding(t, "lock", path, "--data", "go-holder")
	defer stop(holder)
	_, err := admin.CreateContainer(path+"/leases", nil, zk.FlagContainer, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	lease, err := admin.Create(path+"/leases/_c_0b9a4f1e-6c1d-4d5e-9f00-1a2b3c4d5e6f-lease-", []byte("java-holder"),
		zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	defer func() { require.NoError(t, admin.Delete(lease, -1)) }()

	code, stdout, stderr := zkrecipes(t, "inspect", path)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "mixed: used by mutex and semaphore at once")
	assert.Contains(t, stdout, "go-holder")
	assert.Contains(t, stdout, "java-holder")
	assert.NotContains(t, stdout, "free (semaphore)")

	code, stdout, stderr = zkrecipes(t, "inspect", "--json", path)
	require.Equal(t, 0, code, stderr)
	var in struct {
		Type    string
		Parts   []struct{ Type string }
		Holders []struct{ Data string }
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &in), stdout)
	assert.Equal(t, "mixed", in.Type)
	require.Len(t, in.Parts, 2, stdout)
	assert.Equal(t, "mutex", in.Parts[0].Type)
	assert.Equal(t, "semaphore", in.Parts[1].Type)
	assert.Len(t, in.Holders, 2, stdout)
}

// TestOtherRecipeOnAHeldPathExits65: while `lock` holds a path, `wlock` and
// `semaphore-mutex` on it are refused (they would not exclude the holder)
// and leave nothing behind; so is `barrier set`.
func TestOtherRecipeOnAHeldPathExits65(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/p"
	holder := startHolding(t, "lock", path)
	defer stop(holder)
	before := lockNodes(t, admin, path)
	for _, args := range [][]string{
		{"wlock", path, "--timeout", "10s", "--", "true"},
		{"semaphore-mutex", path, "--timeout", "10s", "--", "true"},
		{"barrier", "set", path},
	} {
		code, _, stderr := zkrecipes(t, args...)
		assert.Equal(t, 65, code, "%q: %s", args, stderr)
		assert.Contains(t, stderr, "path used by another recipe", "%q", args)
		if args[0] != "barrier" {
			assert.Contains(t, stderr, "mutex's node", "%q", args)
		}
		// The barrier may name the refused semaphore mutex's empty
		// container instead: both are there until ZooKeeper reaps it.
	}
	assert.Equal(t, before, slices.DeleteFunc(lockNodes(t, admin, path), func(n string) bool { return n == "locks" }),
		"a refused recipe left a node (an empty container apart)")
}
