package engine_test

import (
	"testing"

	"github.com/nxkv/nxkv/internal/redistest"
)

// TestMain checks that no test in the binary leaves a goroutine behind: every
// engine a test creates must be closed, and Close must stop the reaper. It
// also says, in one line, how many differential tests were skipped for lack
// of redis-server.
//
// Package engine's internal tests are linked into the same binary, so this is
// the binary's only TestMain.
func TestMain(m *testing.M) { redistest.Main(m) }
