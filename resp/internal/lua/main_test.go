package lua_test

import (
	"testing"

	"github.com/nxkv/nxkv/internal/redistest"
)

// TestMain fails the package if a test leaks a goroutine or leaves a
// redis-server running.
func TestMain(m *testing.M) { redistest.Main(m) }
