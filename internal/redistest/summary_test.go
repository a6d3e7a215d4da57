package redistest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestSkipLine(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{1, "example.com/p: 1 test skipped: redis-server not found on PATH; install it, or set NXKV_REQUIRE_REDIS=1 to fail instead\n"},
		{31, "example.com/p: 31 tests skipped: redis-server not found on PATH; install it, or set NXKV_REQUIRE_REDIS=1 to fail instead\n"},
	}
	for _, tt := range tests {
		if got := skipLine("example.com/p", tt.n); got != tt.want {
			t.Errorf("skipLine(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestPackagePath(t *testing.T) {
	if got, want := packagePath(), "github.com/nxkv/nxkv/internal/redistest"; got != want {
		t.Errorf("packagePath() = %q, want %q", got, want)
	}
}

// TestLogCaptureHoldsGoRedisLines makes go-redis log (a sub-millisecond
// expiry is truncated with a log line) and checks the line is held, not
// printed, and comes out of writeTo.
func TestLogCaptureHoldsGoRedisLines(t *testing.T) {
	c := &logCapture{}
	redis.SetLogger(c)
	t.Cleanup(func() {
		if redisLog != nil {
			redis.SetLogger(redisLog)
		}
	})
	rc := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer rc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = rc.Set(ctx, "k", "v", 500*time.Microsecond).Err() // no server: fails after logging

	var out bytes.Buffer
	c.writeTo(&out)
	if !strings.Contains(out.String(), "truncating to 1ms") {
		t.Errorf("writeTo() = %q, want go-redis's truncation line", out.String())
	}
}

func TestLogCaptureBounded(t *testing.T) {
	c := &logCapture{}
	var out bytes.Buffer
	c.writeTo(&out)
	if out.Len() != 0 {
		t.Errorf("writeTo() with nothing captured = %q, want nothing", out.String())
	}
	for i := range maxLogLines + 5 {
		c.Printf(context.Background(), "line %d", i)
	}
	c.writeTo(&out)
	if got := strings.Count(out.String(), "  line "); got != maxLogLines {
		t.Errorf("writeTo() printed %d lines, want %d", got, maxLogLines)
	}
	if !strings.Contains(out.String(), "and 5 more") || !strings.Contains(out.String(), "logged 205 lines") {
		t.Errorf("writeTo() = ...%q, want the 5 dropped lines counted", out.String()[len(out.String())-60:])
	}
}

// helperEnv marks the go test child of TestSkipSummaryShown.
const helperEnv = "NXKV_REDISTEST_SKIP_HELPER"

// TestSkippedHelper skips two tests through Binary; it does something only
// as the child of TestSkipSummaryShown, where PATH has no redis-server.
func TestSkippedHelper(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("runs only as a child of TestSkipSummaryShown")
	}
	for _, name := range []string{"a", "b"} {
		t.Run(name, func(t *testing.T) { Binary(t) })
	}
}

// TestSkipSummaryShown runs this package's tests the way a user would, with
// go test and a PATH holding only the go command (so no redis-server), and
// checks that the summary line appears exactly once, with and without -v:
// go test drops a passing package's output without -v, so this fails if
// the line is only printed in the package's own output.
func TestSkipSummaryShown(t *testing.T) {
	if os.Getenv(helperEnv) == "1" {
		t.Skip("the child run")
	}
	bin := pathWithout(t, "redis-server")
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "PATH" && k != RequireEnv {
			env = append(env, kv)
		}
	}
	env = append(env, "PATH="+bin, helperEnv+"=1")
	want := "github.com/nxkv/nxkv/internal/redistest: 2 tests skipped: " + SkipReason + "\n"
	for _, verbose := range []bool{false, true} {
		args := []string{"test", "-count=1", "-run", "^TestSkippedHelper$", "."}
		if verbose {
			args = []string{"test", "-count=1", "-v", "-run", "^TestSkippedHelper$", "."}
		}
		cmd := exec.Command(filepath.Join(bin, "go"), args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		if got := strings.Count(string(out), want); got != 1 {
			t.Errorf("go %s printed the summary %d times, want once; output:\n%s", strings.Join(args, " "), got, out)
		}
	}
}

// pathWithout returns a directory holding a symlink to every command on
// PATH (the first of each name, as a lookup would find it) except the one
// named hidden: PATH as it is, with that command uninstalled.
func pathWithout(t *testing.T, hidden string) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if e.Name() == hidden {
				continue
			}
			// A name taken by an earlier directory fails with EEXIST and
			// keeps the earlier one, as PATH lookup does.
			_ = os.Symlink(filepath.Join(d, e.Name()), filepath.Join(dir, e.Name()))
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "go")); err != nil {
		t.Skipf("no go command on PATH: %v", err)
	}
	return dir
}
