package main_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes/internal/testenv"
	"github.com/zkrecipes/recipes/zktest"
)

// exitOf is the exit status of a finished command: -1 if it could not
// run.
func exitOf(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}

// lines reads the lines written to file so far.
func lines(file string) []string {
	b, _ := os.ReadFile(file)
	return strings.Fields(string(b))
}

// TestElectRunsOneLeaderAtATime: candidates lead one at a time, each with
// its id and a fencing token greater than the last term's, and leave
// nothing behind; leader and inspect say who leads, for a latch and for a
// selector.
func TestElectRunsOneLeaderAtATime(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	for _, flavour := range []string{"latch", "selector"} {
		t.Run(flavour, func(t *testing.T) {
			path := root + "/" + flavour
			var extra []string
			if flavour == "selector" {
				extra = []string{"--selector"}
			}
			log := filepath.Join(t.TempDir(), "log")
			script := `echo "start:$ZKRECIPES_LEADER_ID:$ZKRECIPES_FENCING_TOKEN:$ZKRECIPES_ELECTION_PATH" >> "$1"; sleep 0.1; echo "end:$ZKRECIPES_LEADER_ID" >> "$1"`
			var wg sync.WaitGroup
			codes := make([]int, 3)
			for i := range codes {
				wg.Go(func() {
					args := append([]string{"elect", path, "--id", "c" + strconv.Itoa(i)}, extra...)
					codes[i] = exitOf(command(t, append(args, "--", "sh", "-c", script, "sh", log)...).Run())
				})
			}
			wg.Wait()
			assert.Equal(t, []int{0, 0, 0}, codes)
			got := lines(log)
			require.Len(t, got, 6)
			last := int64(0)
			for i := 0; i < len(got); i += 2 {
				start := strings.Split(got[i], ":")
				require.Len(t, start, 4, got[i])
				assert.Equal(t, "end:"+start[1], got[i+1], "terms overlapped: %q", got)
				token, err := strconv.ParseInt(start[2], 10, 64)
				require.NoError(t, err)
				assert.Greater(t, token, last, "fencing tokens: %q", got)
				last = token
				assert.Equal(t, path, start[3])
			}
			assert.Empty(t, lockNodes(t, admin, path))

			// A leader and one waiting behind it: leader names the
			// leader, inspect shows both.
			start(t, append([]string{"elect", path, "--id", "the-leader"}, append(extra, "--", "sleep", "30")...)...)
			waitNodes(t, admin, path, 1)
			start(t, append([]string{"elect", path, "--id", "next"}, append(extra, "--", "sleep", "30")...)...)
			waitNodes(t, admin, path, 2)
			code, stdout, stderr := zkrecipes(t, "leader", path)
			assert.Equal(t, 0, code, stderr)
			assert.Equal(t, "the-leader\n", stdout)
			code, stdout, stderr = zkrecipes(t, "leader", path, "--json")
			assert.Equal(t, 0, code, stderr)
			var line struct {
				Path   string `json:"path"`
				Leader bool   `json:"leader"`
				ID     string `json:"id"`
				Token  int64  `json:"fencing_token"`
			}
			require.NoError(t, json.Unmarshal([]byte(stdout), &line), stdout)
			assert.Equal(t, path, line.Path)
			assert.True(t, line.Leader)
			assert.Equal(t, "the-leader", line.ID)
			assert.Positive(t, line.Token)
			text, in := inspectBoth(t, path)
			require.Len(t, in.Holders, 1)
			require.Len(t, in.Waiters, 1)
			assert.Equal(t, []string{"the-leader", "next"}, []string{in.Holders[0].Data, in.Waiters[0].Data})
			if flavour == "latch" {
				assert.Equal(t, "leader-latch", in.Type)
				assert.Equal(t, "latch", in.Holders[0].Kind)
				assert.Contains(t, text, path+": leader-latch, led by the-leader for ")
			} else {
				assert.Equal(t, "mutex", in.Type)
				assert.Contains(t, text, path+": mutex, held by the-leader for ")
			}
		})
	}
}

// TestLeaderWithNobodyOrAnotherRecipe: leader exits 1 when nobody
// campaigns, 65 on another recipe's path, and 64 on bad input.
func TestLeaderWithNobodyOrAnotherRecipe(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	code, stdout, stderr := zkrecipes(t, "leader", root+"/nobody")
	assert.Equal(t, 1, code, stderr)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "nobody campaigns at "+root+"/nobody")
	code, stdout, _ = zkrecipes(t, "leader", root+"/nobody", "--json")
	assert.Equal(t, 1, code)
	assert.JSONEq(t, `{"path":"`+root+`/nobody","leader":false}`, stdout)

	rw := root + "/rw"
	start(t, "rlock", rw, "--", "sleep", "30")
	waitNodes(t, admin, rw, 1)
	code, _, stderr = zkrecipes(t, "leader", rw)
	assert.Equal(t, 65, code, stderr)
	assert.Contains(t, stderr, "is used by a rwlock, not by an election")
	code, _, stderr = zkrecipes(t, "leader", rw, "--watch")
	assert.Equal(t, 65, code, stderr)
	code, _, stderr = zkrecipes(t, "elect", rw, "--", "true")
	assert.Equal(t, 65, code, stderr)
	code, _, stderr = zkrecipes(t, "elect", rw, "--requeue", "--", "true")
	assert.Equal(t, 65, code, stderr)

	// --requeue gives up on an ACL that refuses, rather than retry it.
	closed := root + "/closed"
	_, err := admin.CreateContainer(closed, nil, zk.FlagContainer, zk.WorldACL(zk.PermRead))
	require.NoError(t, err)
	code, _, stderr = zkrecipes(t, "elect", closed, "--requeue", "--", "true")
	assert.Equal(t, 77, code, stderr)

	for _, args := range [][]string{
		{"leader"},
		{"leader", "no-slash"},
		{"elect", "no-slash", "--", "true"},
		{"elect", root + "/e", "--requeue", "-n", "--", "true"},
		{"elect", root + "/e", "--requeue", "--timeout", "1s", "--", "true"},
		{"elect", root + "/e", "--data", "x", "--", "true"},
		{"elect", root + "/e"},
	} {
		code, _, stderr := zkrecipes(t, args...)
		assert.Equal(t, 64, code, "%q: %s", args, stderr)
	}
	code, _, stderr = zkrecipes(t, "elect", root+"/e", "--requeue", "--", "no-such-command-here")
	assert.Equal(t, 127, code, stderr)
	names, _, err := admin.Children(root)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"rw", "closed"}, names, "bad input created nodes")
}

// TestElectRequeue: with --requeue a candidate campaigns again when its
// command exits and when it loses its term, each term with a greater
// token; a signal passed on to the command ends the run with the
// command's status; nothing is left.
func TestElectRequeue(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/e"
	log := filepath.Join(t.TempDir(), "log")
	// Three short terms, then terms that last until stopped.
	script := `echo "$ZKRECIPES_FENCING_TOKEN" >> "$1"; [ "$(wc -l < "$1")" -ge 3 ] && exec sleep 30; exit 0`
	p := command(t, "elect", path, "--requeue", "--id", "requeued", "--", "sh", "-c", script, "sh", log)
	var stderr testenv.Buffer
	p.Stderr = &stderr
	require.NoError(t, p.Start())
	t.Cleanup(func() { _ = p.Process.Kill() })
	eventually(t, func() bool { return len(lines(log)) == 3 && len(lockNodes(t, admin, path)) == 1 })

	// The term is lost: the command is stopped, and the next term starts.
	require.NoError(t, admin.Delete(path+"/"+lockNodes(t, admin, path)[0], -1))
	eventually(t, func() bool { return len(lines(log)) == 4 })
	assert.Contains(t, stderr.String(), "leadership lost")
	tokens := lines(log)
	for i := 1; i < len(tokens); i++ {
		prev, _ := strconv.ParseInt(tokens[i-1], 10, 64)
		next, _ := strconv.ParseInt(tokens[i], 10, 64)
		assert.Greater(t, next, prev, "tokens %q", tokens)
	}

	// SIGHUP is passed on (sleep dies of it: 128+1) and does not stop the
	// run: the next term starts.
	eventually(t, func() bool { return len(lockNodes(t, admin, path)) == 1 })
	require.NoError(t, p.Process.Signal(syscall.SIGHUP))
	eventually(t, func() bool { return len(lines(log)) == 5 })
	assert.Contains(t, stderr.String(), "the command exited with status 129; campaigning again")

	// A standby stopped while it campaigns exits 0, and leaves nothing.
	standby := command(t, "elect", path, "--requeue", "--id", "standby", "--", "true")
	require.NoError(t, standby.Start())
	t.Cleanup(func() { _ = standby.Process.Kill() })
	eventually(t, func() bool { return len(lockNodes(t, admin, path)) == 2 })
	require.NoError(t, standby.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 0, exitOf(standby.Wait()))
	assert.Len(t, lockNodes(t, admin, path), 1)

	// SIGTERM goes to the command (sleep: 128+15), and ends the run.
	require.NoError(t, p.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 143, exitOf(p.Wait()), stderr.String())
	assert.Empty(t, lockNodes(t, admin, path))
	assert.Len(t, lines(log), 5)
}

// TestElectRequeuePausesAfterAFailingCommand: a command that fails at once
// is run again after a growing pause, not in a tight loop; a signal during
// the pause ends the run, with 0.
func TestElectRequeuePausesAfterAFailingCommand(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	path := zktest.Root(t, admin) + "/e"
	p := command(t, "elect", path, "--requeue", "--", "sh", "-c", "exit 3")
	var stderr testenv.Buffer
	p.Stderr = &stderr
	require.NoError(t, p.Start())
	t.Cleanup(func() { _ = p.Process.Kill() })
	// The pause after the third failure is 2s: the signal comes in it.
	eventually(t, func() bool { return strings.Contains(stderr.String(), "campaigning again for "+path+" in 2s") })
	assert.Equal(t, 1, strings.Count(stderr.String(), "in 500ms"), stderr.String())
	assert.Equal(t, 1, strings.Count(stderr.String(), "in 1s"), stderr.String())
	require.NoError(t, p.Process.Signal(syscall.SIGINT))
	assert.Equal(t, 0, exitOf(p.Wait()), stderr.String())
	eventually(t, func() bool { return len(lockNodes(t, admin, path)) == 0 })
}

// TestLeaderWatch: leader --watch prints the leader now, and each new one
// as it takes over, and nothing for a candidate that only waits.
func TestLeaderWatch(t *testing.T) {
	admin := zktest.Connect(t, zktest.Servers(t))
	root := zktest.Root(t, admin)
	for _, flavour := range []string{"latch", "selector"} {
		t.Run(flavour, func(t *testing.T) {
			var extra []string
			if flavour == "selector" {
				extra = []string{"--selector"}
			}
			leaderWatch(t, admin, root+"/"+flavour, extra)
		})
	}
}

func leaderWatch(t *testing.T, admin *zk.Conn, path string, extra []string) {
	w := command(t, "leader", path, "--watch", "--json")
	out, err := w.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(func() { _ = w.Process.Kill() })
	type line struct {
		Leader bool   `json:"leader"`
		ID     string `json:"id"`
	}
	seen := make(chan line, 10)
	go func() {
		defer close(seen)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var l line
			if json.Unmarshal(sc.Bytes(), &l) == nil {
				seen <- l
			}
		}
	}()
	next := func() line {
		t.Helper()
		select {
		case l, ok := <-seen:
			require.True(t, ok, "leader --watch ended")
			return l
		case <-time.After(30 * time.Second):
			require.FailNow(t, "leader --watch printed nothing")
		}
		return line{}
	}
	assert.Equal(t, line{}, next(), "nobody campaigns yet")

	first := command(t, append(append([]string{"elect", path, "--id", "first"}, extra...), "--", "sleep", "30")...)
	require.NoError(t, first.Start())
	t.Cleanup(func() { _ = first.Process.Kill() })
	assert.Equal(t, line{true, "first"}, next())
	second := command(t, append(append([]string{"elect", path, "--id", "second"}, extra...), "--", "sleep", "30")...)
	require.NoError(t, second.Start())
	t.Cleanup(func() { stop(second) })
	waitNodes(t, admin, path, 2)
	stop(first) // it resigns
	assert.Equal(t, line{true, "second"}, next(), "a waiter is not a leader")

	require.NoError(t, w.Process.Signal(syscall.SIGINT))
	for l := range seen { // until it exits, and its output ends
		assert.Fail(t, "printed after the last change", "%+v", l)
	}
	assert.Equal(t, 130, exitOf(w.Wait()))
}
