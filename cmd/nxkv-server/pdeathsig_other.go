//go:build !linux

package main

// dieWithParent is only supported on Linux.
func dieWithParent() {}
