package engine_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test in the binary leaves a goroutine behind: every
// engine a test creates must be closed, and Close must stop the reaper.
//
// Package engine's internal tests are linked into the same binary, so this is
// the binary's only TestMain.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
