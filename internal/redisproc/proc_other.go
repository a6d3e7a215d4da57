//go:build !linux

package redisproc

import "os/exec"

// dieWithParent does nothing where the kernel cannot kill a child with its
// parent: a crashed test may leave its server running.
func dieWithParent(*exec.Cmd) {}
