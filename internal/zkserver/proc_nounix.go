//go:build !unix

package zkserver

import (
	"fmt"
	"runtime"
	"syscall"
)

// sysProcAttr has nothing to set where there are no process groups.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// killGroup kills nothing where there are no process groups: kill then
// kills the JVM itself.
func killGroup(int) error { return fmt.Errorf("no process groups on %s", runtime.GOOS) }

func (p *process) pause() error {
	return fmt.Errorf("zkserver: pausing a server needs SIGSTOP, which %s does not have", runtime.GOOS)
}

func (p *process) resume() error {
	return fmt.Errorf("zkserver: resuming a server needs SIGCONT, which %s does not have", runtime.GOOS)
}
