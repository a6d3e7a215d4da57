package redisproc

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill cmd's process when the test process
// dies, so a crashed test leaves no server behind.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
