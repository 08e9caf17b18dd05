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

func TestAtLeastOne(t *testing.T) {
	if err := AtLeastOne(1, "a semaphore", "lease"); err != nil {
		t.Fatalf("1 lease refused: %v", err)
	}
	for _, n := range []int{0, -1} {
		err := AtLeastOne(n, "a semaphore", "lease")
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "a semaphore needs at least 1 lease, not "+strconv.Itoa(n)) {
			t.Errorf("AtLeastOne(%d) = %v", n, err)
		}
	}
}
