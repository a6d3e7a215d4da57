package locktest_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"go.uber.org/goleak"

	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/locktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func memEnv(flaw string, instant bool) func(t *testing.T) locktest.Env {
	return func(t *testing.T) locktest.Env {
		c := clock.NewMock()
		c.Set(locktest.Epoch)
		m := newMem(c, flaw)
		var b lockapi.Backend = m
		if !instant {
			b = pollOnly{m}
		}
		return locktest.Env{Backend: b, Clock: c, Advance: m.advance, Fencing: true, Instant: instant}
	}
}

// TestReference runs the suite over the reference backend, with and
// without its Watcher.
func TestReference(t *testing.T) {
	t.Run("Instant", func(t *testing.T) { locktest.Run(t, memEnv("", true)) })
	t.Run("Polling", func(t *testing.T) { locktest.Run(t, memEnv("", false)) })
}

// plantEnv names the environment variable that makes TestPlanted run the
// suite over a flawed backend, in a child process.
const plantEnv = "LOCKTEST_PLANTED_FLAW"

// TestPlanted shows the suite catches broken backends: each flaw is planted
// in the reference backend and the suite, run in a child process, must fail
// in the named cases.
func TestPlanted(t *testing.T) {
	if flaw := os.Getenv(plantEnv); flaw != "" {
		if strings.HasPrefix(flaw, "sem-") || strings.HasPrefix(flaw, "rw-") || strings.HasPrefix(flaw, "multi-") || strings.HasPrefix(flaw, "reentrant-") {
			locktest.Run(t, flawedEnv(flaw)) // the primitives, planted in the in-process backend
			return
		}
		locktest.Run(t, memEnv(flaw, true))
		return
	}
	for _, tc := range []struct {
		flaw     string
		failures []string // subtests that must fail
	}{
		{"release-unconditional", []string{"NotHeldNeverTouchesNewHolder"}},
		{"refresh-unconditional", []string{"NotHeldNeverTouchesNewHolder"}},
		{"acquire-overwrites", []string{"Acquire", "ContendNoRetry", "BackendContract"}},
		{"fence-restarts", []string{"FencingOrder", "BackendContract"}},
		{"no-expiry", []string{"ExpiryFrees", "StealAfterExpiry", "LostSignal"}},
		{"no-notify", []string{"LostSignal", "InstantWake"}},
		{"refuses-braces", []string{"KeysAccepted"}},
		{"refuses-long-ttl", []string{"TTLRangeAccepted"}},
		{"sem-one-too-many", []string{"SemaphoreLimit", "SemaphoreLimitChange"}},
		{"sem-rw-fences-restart", []string{"FencesSurviveFlush"}},
		{"sem-watches-one-slot", []string{"SemaphoreWake"}},
		{"rw-readers-apart", []string{"RWShared", "RWWriterPreferred", "RWWake"}},
		{"rw-no-mark", []string{"RWWriterPreferred"}},
		{"rw-mark-kept", []string{"RWWriterGivesUp"}},
		{"multi-one-by-one", []string{"MultiAllOrNothing"}},
		{"multi-racy", []string{"MultiAtomic"}},
		{"multi-refresh-some", []string{"MultiPartialLoss"}},
		{"reentrant-first-release-frees", []string{"Reentrant"}},
		{"reentrant-refresh-shortens", []string{"ReentrantTTL"}},
		{"reentrant-holds-counted", []string{"ReentrantHolds"}},
		{"reentrant-stale-refresh", []string{"ReentrantStaleHold"}},
	} {
		t.Run(tc.flaw, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestPlanted$", "-test.v", "-test.timeout=2m")
			cmd.Env = append(os.Environ(), plantEnv+"="+tc.flaw)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			start := time.Now()
			err := cmd.Run()
			if err == nil {
				t.Fatalf("suite over a backend with flaw %q passed, want failure; output:\n%s", tc.flaw, out.String())
			}
			if _, ok := err.(*exec.ExitError); !ok {
				t.Fatalf("running the child: %v", err)
			}
			for _, name := range tc.failures {
				if !strings.Contains(out.String(), "--- FAIL: TestPlanted/"+name+" ") {
					t.Errorf("flaw %q: case %s did not fail; output:\n%s", tc.flaw, name, out.String())
				}
			}
			t.Logf("flaw %q caught in %v", tc.flaw, time.Since(start).Round(time.Millisecond))
		})
	}
}
