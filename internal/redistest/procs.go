package redistest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// Main runs the package's tests and then fails the package when a test left
// a redis-server child process running or leaked a goroutine. Call it from
// TestMain in packages that start servers:
//
//	func TestMain(m *testing.M) { redistest.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if pids := Children(); len(pids) > 0 {
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

// Children returns the PIDs of redis-server processes whose parent is this
// process, read from /proc (empty where /proc is missing).
func Children() []int {
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
