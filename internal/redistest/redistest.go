// Package redistest starts throwaway redis-server processes for tests.
//
// A test that needs Redis calls Start; when no redis-server binary is on
// PATH the test is skipped with a clear message, unless the environment
// variable NXKV_REQUIRE_REDIS is set to 1 (as .ci/run does), in which case it
// fails: CI must never pass by skipping the differential tests.
package redistest

import (
	"os"
	"os/exec"
	"testing"

	"github.com/nxkv/nxkv/internal/redisproc"
)

// RequireEnv is the variable that turns a missing redis-server into a failure.
const RequireEnv = "NXKV_REQUIRE_REDIS"

// Server is a running redis-server bound to loopback.
type Server = redisproc.Server

// Binary returns the redis-server path, or skips (fails under RequireEnv) t.
func Binary(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("redis-server not found on PATH and %s=1: %v", RequireEnv, err)
		}
		t.Skipf("redis-server not found on PATH; install it (apt-get install redis-server) to run this test")
	}
	return path
}

// Start launches a redis-server on a free loopback port with persistence off
// and registers its termination (by PID, SIGKILL) with t.Cleanup, which also
// runs when the test panics. It returns once the server answers PING. args
// go first on the command line, so a config file may lead them (Sentinel:
// Start(t, conf, "--sentinel")); cluster options are fine too.
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	s, err := redisproc.Start(Binary(t), args...)
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	t.Cleanup(s.Kill)
	return s
}
