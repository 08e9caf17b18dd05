//go:build !linux

package main

import "syscall"

// childAttr starts the command as a plain child elsewhere than on Linux:
// only its own process is signalled.
func childAttr() (attr *syscall.SysProcAttr, group bool) { return nil, false }
