package redistest

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Main runs the package's tests; call it from TestMain in every package
// whose tests start redis-servers or use go-redis:
//
//	func TestMain(m *testing.M) { redistest.Main(m) }
//
// While the tests run, go-redis's log is held back (printed only if a test
// fails). Afterwards Main fails the package when a test left a redis-server
// child process running or leaked a goroutine, and, when tests were skipped
// for lack of redis-server, prints one line saying how many, and why.
//
// go test shows the output of a passing package only with -v, so without -v
// that line goes straight to the go command's standard output (through
// /proc/PPID/fd/1, when it is a terminal or a pipe), where it appears next
// to the package's "ok" line. With -v, -json, or a failing package it is
// printed in the package's own output instead. A result go test replays
// from its cache ("ok ... (cached)") ran nothing and prints no line; the
// cache ignores files outside the module, so installing redis-server does
// not invalidate it either: go test -count=1 runs the tests again.
//
// Each check runs after the tests when they passed, writes what it found
// wrong to its writer and returns 1 to fail the package (0 otherwise).
func Main(m *testing.M, checks ...func(w io.Writer) int) {
	redisLog = captureRedisLog()
	code := m.Run()
	if code != 0 {
		redisLog.writeTo(os.Stderr)
	} else {
		code = leftovers(os.Stderr)
		for _, check := range checks {
			code = max(code, check(os.Stderr))
		}
	}
	if n := skipped.Load(); n > 0 {
		reportSkips(skipLine(packagePath(), n), code == 0)
	}
	os.Exit(code)
}

// leftovers reports redis-server children and leaked goroutines to w and
// returns the exit code: 1 if there were any. go-redis's reconnect loop for a
// killed server sleeps a second between dials and only sees its closed pool
// on the next one, so goroutines get up to 5 s to end rather than being
// ignored.
func leftovers(w io.Writer) int {
	code := 0
	if pids := Children(); len(pids) > 0 {
		fmt.Fprintf(w, "FAIL: redis-server processes left running by the tests: %v\n", pids)
		code = 1
	}
	err := goleak.Find()
	for deadline := time.Now().Add(5 * time.Second); err != nil && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		err = goleak.Find()
	}
	if err != nil {
		fmt.Fprintf(w, "FAIL: goroutines leaked: %v\n", err)
		code = 1
	}
	return code
}

// skipLine is the summary for n skipped tests of package pkg.
func skipLine(pkg string, n int64) string {
	tests := "tests"
	if n == 1 {
		tests = "test"
	}
	return fmt.Sprintf("%s: %d %s skipped: %s\n", pkg, n, tests, SkipReason)
}

// packagePath is the import path of the package under test (a test binary's
// main package path is the package's path plus ".test").
func packagePath() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Path != "" {
		return strings.TrimSuffix(bi.Path, ".test")
	}
	return strings.TrimSuffix(os.Args[0], ".test")
}

// reportSkips prints line where the person running the tests sees it.
func reportSkips(line string, passed bool) {
	if passed && !testing.Verbose() {
		if f := parentOutput(); f != nil {
			defer f.Close()
			if _, err := io.WriteString(f, line); err == nil {
				return
			}
		}
	}
	fmt.Print(line)
}
