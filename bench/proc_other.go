//go:build !linux

package main

import "os/exec"

// dieWithParent does nothing where the kernel cannot kill a child with its
// parent: the suite stops its servers itself, on exit and on interrupt.
func dieWithParent(*exec.Cmd) {}
