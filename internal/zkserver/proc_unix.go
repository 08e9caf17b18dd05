//go:build unix

package zkserver

import (
	"errors"
	"fmt"
	"syscall"
)

// killGroup sends SIGKILL to the process group of pid.
func killGroup(pid int) error {
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// pause stops the process group with SIGSTOP.
func (p *process) pause() error { return p.signal(syscall.SIGSTOP) }

// resume continues the process group with SIGCONT.
func (p *process) resume() error { return p.signal(syscall.SIGCONT) }

// signal sends sig to the process group.
func (p *process) signal(sig syscall.Signal) error {
	if !p.alive() {
		return fmt.Errorf("zkserver: java process %d has exited", p.cmd.Process.Pid)
	}
	if err := syscall.Kill(-p.cmd.Process.Pid, sig); err != nil {
		return fmt.Errorf("zkserver: signal %v to java process %d: %w", sig, p.cmd.Process.Pid, err)
	}
	return nil
}
