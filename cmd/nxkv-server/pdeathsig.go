//go:build linux

package main

import (
	"os"
	"syscall"
)

// dieWithParent asks the kernel to kill the server with SIGTERM when its
// parent exits, and exits at once if the parent is already gone.
func dieWithParent() {
	parent := os.Getppid()
	const prSetPdeathsig = 1
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetPdeathsig, uintptr(syscall.SIGTERM), 0)
	if os.Getppid() != parent {
		os.Exit(0)
	}
}
