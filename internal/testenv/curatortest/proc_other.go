//go:build !linux

package curatortest

import (
	"os"
	"syscall"
)

// sysProcAttr returns nil: parent-death signals are only available on Linux.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// terminate asks the peer to close its clients and exit where signals
// exist, and kills it elsewhere.
func terminate(p *os.Process) error {
	if err := p.Signal(syscall.SIGTERM); err != nil {
		return p.Kill()
	}
	return nil
}
