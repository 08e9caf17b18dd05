//go:build linux

package zkserver

import "syscall"

// sysProcAttr puts the child in its own process group (so Stop can kill the
// whole group) and asks the kernel to SIGKILL it if the test binary dies, so
// a crashed or killed test never leaves a Java process behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
