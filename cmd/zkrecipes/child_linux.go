package main

import (
	"os"
	"syscall"
	"unsafe"
)

// childAttr is how the command is started: in a process group of its own
// (so that a lost lock stops everything it started, not only its first
// process) unless zkrecipes' stdin is a terminal, where a command in
// another process group could not read it; and killed if zkrecipes dies
// (Pdeathsig: the thread that starts it must live as long as it runs, see
// child.run). group reports whether it has a group of its own.
func childAttr() (attr *syscall.SysProcAttr, group bool) {
	group = !isTerminal(os.Stdin)
	return &syscall.SysProcAttr{Setpgid: group, Pdeathsig: syscall.SIGKILL}, group
}

// isTerminal reports whether f is a terminal (a TCGETS ioctl succeeds).
func isTerminal(f *os.File) bool {
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return errno == 0
}
