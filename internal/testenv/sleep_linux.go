package testenv

import (
	"syscall"
	"time"
)

// sleep blocks the calling goroutine's thread in nanosleep(2) for d, which
// wakes within tens of microseconds, where time.Sleep may wait a millisecond
// for a wait of a quarter of one (see Proxy.SetDelay).
func sleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR { // the runtime's preemption signal
	}
}
