//go:build !linux

package testenv

import "time"

// sleep waits for d on the runtime's timers, which may round a wait under a
// millisecond up to one (see Proxy.SetDelay).
func sleep(d time.Duration) { time.Sleep(d) }
