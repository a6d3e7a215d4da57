package redlock_test

import (
	"testing"

	"github.com/nxkv/nxkv/internal/redistest"
)

// TestMain fails the package when a test leaked a goroutine or left a
// redis-server child process running (the check itself is tested in
// internal/redistest).
func TestMain(m *testing.M) { redistest.Main(m) }
