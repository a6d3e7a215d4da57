package redistest_test

import (
	"slices"
	"testing"

	"github.com/nxkv/nxkv/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// TestChildrenSeesServers shows the leftover check can fail: a running
// server started by the test is found, and is gone once killed.
func TestChildrenSeesServers(t *testing.T) {
	srv := redistest.Start(t)
	pid := srv.PID()
	if got := redistest.Children(); !slices.Contains(got, pid) {
		t.Fatalf("Children() = %v, want it to include the running server %d", got, pid)
	}
	srv.Kill()
	if got := redistest.Children(); slices.Contains(got, pid) {
		t.Fatalf("Children() = %v, still includes killed server %d", got, pid)
	}
	if srv.PID() != 0 {
		t.Fatalf("PID() after Kill = %d, want 0", srv.PID())
	}
}
