//go:build unix && !linux

package zkserver

import "syscall"

// sysProcAttr puts the child in its own process group so Stop can kill the
// whole group. Parent-death signals are only available on Linux.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
