package redlock_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/nxkv/nxkv/internal/redistest"
)

// TestMain fails the package when a test leaked a goroutine or left a
// redis-server child process running.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if pids := redisChildren(); len(pids) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: redis-server processes left running by the tests: %v\n", pids)
			code = 1
		}
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: goroutines leaked: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// redisChildren returns the PIDs of redis-server processes whose parent is
// this test binary, read from /proc (empty where /proc is missing).
func redisChildren() []int {
	self := os.Getpid()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var pids []int
	for _, p := range stats {
		raw, err := os.ReadFile(p)
		if err != nil {
			continue // the process ended meanwhile
		}
		// "pid (comm) state ppid ...": comm may hold spaces, so split at the
		// last ')'.
		s := string(raw)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Fields(s[end+1:])
		if len(fields) < 2 || s[open+1:end] != "redis-server" {
			continue
		}
		if ppid, _ := strconv.Atoi(fields[1]); ppid == self {
			pid, _ := strconv.Atoi(strings.TrimSpace(s[:open]))
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestRedisChildrenSeesServers shows the leftover check can fail: a running
// server started by the tests is found, and is gone once killed.
func TestRedisChildrenSeesServers(t *testing.T) {
	srv := redistest.Start(t)
	pid := srv.PID()
	if !slices.Contains(redisChildren(), pid) {
		t.Fatalf("redisChildren() = %v, want it to include the running server %d", redisChildren(), pid)
	}
	srv.Kill()
	if slices.Contains(redisChildren(), pid) {
		t.Fatalf("redisChildren() = %v still includes killed server %d", redisChildren(), pid)
	}
}
