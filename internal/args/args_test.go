package args

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestDefaultDataIsHostAndPid(t *testing.T) {
	host, _ := os.Hostname()
	if got, want := string(DefaultData()), host+":"+strconv.Itoa(os.Getpid()); got != want {
		t.Fatalf("DefaultData() = %q, want %q", got, want)
	}
}

func TestCount(t *testing.T) {
	for _, n := range []int{1, MaxCount} {
		if err := Count(n, "a semaphore", "lease"); err != nil {
			t.Errorf("%d leases refused: %v", n, err)
		}
	}
	for _, n := range []int{0, -1} {
		err := Count(n, "a semaphore", "lease")
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "a semaphore needs at least 1 lease, not "+strconv.Itoa(n)) {
			t.Errorf("Count(%d) = %v", n, err)
		}
	}
	if strconv.IntSize < 64 {
		return // no int is past the limit
	}
	past := int64(MaxCount) + 1
	err := Count(int(past), "a semaphore", "lease")
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "a semaphore takes at most 2147483647 leases (Curator's limit, a Java int), not 2147483648") {
		t.Errorf("Count(MaxCount+1) = %v", err)
	}
}
