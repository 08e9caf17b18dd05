package integration_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
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

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/locks"
	"github.com/zkrecipes/recipes/zktest"
)

// workerEnv makes the test binary a worker process instead of running tests:
// "lockPath|logFile|iterations|hold".
const workerEnv = "ZKRECIPES_TEST_WORKER"

// runWorker runs the worker when asked to, and reports whether it did.
func runWorker() bool {
	spec := os.Getenv(workerEnv)
	if spec == "" {
		return false
	}
	if err := worker(spec); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
	os.Exit(0)
	return true
}

// worker takes the lock iterations times. Under it, it reads the last value
// in the shared log, works for a while, and appends the next value with its
// pid and fencing token. Two holders at once would append the same value.
func worker(spec string) error {
	parts := strings.Split(spec, "|")
	if len(parts) != 4 {
		return fmt.Errorf("bad spec %q", spec)
	}
	path, file := parts[0], parts[1]
	iterations, err := strconv.Atoi(parts[2])
	if err != nil {
		return err
	}
	hold, err := time.ParseDuration(parts[3])
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := recipes.Connect(ctx, strings.Split(os.Getenv(zktest.ServersEnv), ","), recipes.WithSessionTimeout(testSessionTimeout))
	if err != nil {
		return err
	}
	defer s.Close()
	m, err := locks.NewMutex(s, path)
	if err != nil {
		return err
	}
	for range iterations {
		held, err := m.Lock(ctx)
		if err != nil {
			return err
		}
		token := held.Token()
		entries, err := readLog(file)
		if err != nil {
			return err
		}
		next := len(entries) + 1
		if len(entries) > 0 {
			next = entries[len(entries)-1].value + 1
		}
		time.Sleep(hold) // the work done under the lock
		if err := appendLog(file, fmt.Sprintf("%d %d %d\n", next, os.Getpid(), token)); err != nil {
			return err
		}
		if err := held.Release(bg()); err != nil {
			return err
		}
	}
	return nil
}

type logEntry struct {
	value, pid int
	token      int64
}

func readLog(file string) ([]logEntry, error) {
	f, err := os.Open(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []logEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e logEntry
		if _, err := fmt.Sscanf(sc.Text(), "%d %d %d", &e.value, &e.pid, &e.token); err != nil {
			return nil, fmt.Errorf("log line %q: %w", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// appendLog appends line in one write, so a worker killed mid-way leaves a
// whole line or none.
func appendLog(file, line string) error {
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// startWorkers starts n worker processes on one lock and log.
func startWorkers(t *testing.T, n int, path, file string, iterations int, hold time.Duration) []*exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmds := make([]*exec.Cmd, n)
	for i := range cmds {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(),
			fmt.Sprintf("%s=%s|%s|%d|%s", workerEnv, path, file, iterations, hold),
			zktest.ServersEnv+"="+strings.Join(zktest.Servers(t), ","))
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		cmds[i] = cmd
	}
	return cmds
}

// checkLog asserts the log is the work of one holder at a time: values 1..n
// with no repeat or gap, fencing tokens strictly increasing.
func checkLog(t *testing.T, file string) []logEntry {
	t.Helper()
	entries, err := readLog(file)
	require.NoError(t, err)
	for i, e := range entries {
		require.Equal(t, i+1, e.value, "entry %d: a lost update or two holders at once", i)
		if i > 0 {
			require.Greater(t, e.token, entries[i-1].token, "entry %d: fencing token did not grow", i)
		}
	}
	return entries
}

func TestMutexExcludesProcesses(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	const procs, iterations = 4, 25
	file := filepath.Join(t.TempDir(), "log")
	cmds := startWorkers(t, procs, root+"/lock", file, iterations, time.Millisecond)
	var errs []error
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			errs = append(errs, fmt.Errorf("worker %d: %w", i, err))
		}
	}
	require.NoError(t, errors.Join(errs...))
	assert.Len(t, checkLog(t, file), procs*iterations)
}

// TestMutexSurvivesKilledHolders kills holders with SIGKILL in the middle of
// their critical section. Their sessions expire and the others carry on; the
// log must still show one holder at a time and no lost update.
func TestMutexSurvivesKilledHolders(t *testing.T) {
	t.Parallel()
	admin, root := newRoot(t)
	path := root + "/lock"
	const procs, iterations, kills = 5, 8, 2
	file := filepath.Join(t.TempDir(), "log")
	cmds := startWorkers(t, procs, path, file, iterations, 20*time.Millisecond)
	byPid := map[int]*exec.Cmd{}
	for _, c := range cmds {
		byPid[c.Process.Pid] = c
	}

	killed := map[int]bool{}
	for len(killed) < kills {
		pid := holderPid(t, admin, path)
		if pid == 0 || killed[pid] || byPid[pid] == nil {
			time.Sleep(5 * time.Millisecond) // poll the lock's holder
			continue
		}
		require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
		killed[pid] = true
	}
	var wg sync.WaitGroup
	errs := make([]error, procs)
	for i, c := range cmds {
		wg.Go(func() {
			err := c.Wait()
			if !killed[c.Process.Pid] && err != nil {
				errs[i] = fmt.Errorf("worker %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	entries := checkLog(t, file)
	assert.GreaterOrEqual(t, len(entries), (procs-kills)*iterations)
	assert.LessOrEqual(t, len(entries), procs*iterations)
	// The killed sessions have expired (the survivors could not have
	// finished otherwise): nothing is left.
	assert.Empty(t, children(t, admin, path))
}

// holderPid returns the pid in the data of the lock's first node ("host:pid"),
// or 0 if there is none.
func holderPid(t *testing.T, admin *zk.Conn, path string) int {
	t.Helper()
	names := children(t, admin, path)
	if len(names) == 0 {
		return 0
	}
	first := names[0]
	for _, n := range names[1:] {
		if n[strings.LastIndexByte(n, '-'):] < first[strings.LastIndexByte(first, '-'):] {
			first = n
		}
	}
	data, _, err := admin.Get(path + "/" + first)
	if errors.Is(err, zk.ErrNoNode) {
		return 0
	}
	require.NoError(t, err)
	pid, _ := strconv.Atoi(string(data[strings.LastIndexByte(string(data), ':')+1:]))
	return pid
}
