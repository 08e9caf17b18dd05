package recipes_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zkrecipes/recipes"
	"github.com/zkrecipes/recipes/internal/zktest"
	"github.com/zkrecipes/recipes/locks"
)

// workerEnv makes the test binary a worker process instead of running tests:
// "lockPath|counterFile|iterations".
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

// worker takes the lock iterations times; under it, it claims a marker file
// exclusively (a second holder would fail to), and increments the number in
// the counter file by reading and rewriting it.
func worker(spec string) error {
	parts := strings.Split(spec, "|")
	if len(parts) != 3 {
		return fmt.Errorf("bad spec %q", spec)
	}
	path, file := parts[0], parts[1]
	iterations, err := strconv.Atoi(parts[2])
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
		marker, err := os.OpenFile(file+".holder", os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("two holders at once: %w", err)
		}
		marker.Close()
		b, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return err
		}
		if err := os.WriteFile(file, []byte(strconv.Itoa(n+1)), 0o644); err != nil {
			return err
		}
		if err := os.Remove(file + ".holder"); err != nil {
			return err
		}
		if err := m.Unlock(held); err != nil {
			return err
		}
	}
	return nil
}

func TestMutexExcludesProcesses(t *testing.T) {
	t.Parallel()
	_, root := newRoot(t)
	const procs, iterations = 4, 25
	file := filepath.Join(t.TempDir(), "counter")
	require.NoError(t, os.WriteFile(file, []byte("0"), 0o644))
	exe, err := os.Executable()
	require.NoError(t, err)

	var wg sync.WaitGroup
	errs := make([]error, procs)
	for i := range procs {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(),
			workerEnv+"="+root+"/lock|"+file+"|"+strconv.Itoa(iterations),
			zktest.ServersEnv+"="+strings.Join(zktest.ServersT(t), ","))
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		wg.Go(func() {
			if err := cmd.Wait(); err != nil {
				errs[i] = fmt.Errorf("worker %d: %w: %s", i, err, out.String())
			}
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(procs*iterations), string(b))
}
