//go:build !linux

package redistest

import "os"

// parentOutput returns nil: only Linux's /proc gives the parent's output.
func parentOutput() *os.File { return nil }
