//go:build linux

package curatortest

import (
	"os"
	"syscall"
)

// sysProcAttr asks the kernel to kill the peer if the test binary dies, so a
// crashed test never leaves a Java process holding locks.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// terminate asks the peer to close its clients and exit.
func terminate(p *os.Process) error { return p.Signal(syscall.SIGTERM) }
