// Package redistest starts throwaway redis-server processes for tests and
// reports, once per package, the tests that could not run without one.
//
// A test that needs Redis calls Start (or Binary). When no redis-server
// binary is on PATH the test is skipped, unless the environment variable
// NXKV_REQUIRE_REDIS is set to 1 (as .ci/run does), in which case it fails:
// CI must never pass by skipping the differential tests.
//
// A package whose TestMain calls Main also gets, after its tests:
//   - one line saying how many tests were skipped for lack of redis-server,
//     printed even without -v (see Main for how it reaches the go command's
//     output);
//   - go-redis's own log (reconnects, "connection refused") held back, and
//     printed only when a test failed;
//   - a failure when a test leaked a goroutine or left a redis-server child
//     process running.
package redistest

import (
	"os"
	"os/exec"
	"sync/atomic"
	"testing"

	"github.com/nxkv/nxkv/internal/redisproc"
)

// RequireEnv is the variable that turns a missing redis-server into a failure.
const RequireEnv = "NXKV_REQUIRE_REDIS"

// SkipReason is what a test skipped for lack of redis-server says, and what
// the package's summary line says after the count.
const SkipReason = "redis-server not found on PATH; install it, or set " + RequireEnv + "=1 to fail instead"

// Server is a running redis-server bound to loopback.
type Server = redisproc.Server

// skipped counts the tests of this binary that Binary skipped.
var skipped atomic.Int64

// Binary returns the redis-server path, or skips t (fails it when
// NXKV_REQUIRE_REDIS=1). Each skip is counted for Main's summary.
func Binary(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("redis-server not found on PATH and %s=1: %v", RequireEnv, err)
		}
		skipped.Add(1)
		t.Skip(SkipReason)
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
