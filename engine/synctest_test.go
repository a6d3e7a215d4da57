package engine_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/nxkv/nxkv/engine"
)

// TestSynctestExample shows the zero-injection way to test code that uses
// the engine in fake time: run it inside a testing/synctest bubble with the
// default clock. time.Sleep then advances virtual time at once, the engine's
// reaper sleeps on virtual timers, and expiry is exact and instant. (Example
// functions cannot call synctest.Test, hence a test; the code is the
// example.)
func TestSynctestExample(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := engine.New(engine.Options{}) // no clock injected
		defer e.Close()                   // the bubble requires its goroutines to exit

		if ok, _ := e.SetNXPX("lock:report", "token-1", 30*time.Second); !ok {
			t.Fatal("SetNXPX = false, want true")
		}
		expired, stop := e.Watch("lock:report")
		defer stop()

		time.Sleep(30 * time.Second) // virtual: returns at once
		if v, ok := e.Get("lock:report"); !ok || v != "token-1" {
			t.Fatalf("Get at the deadline = %q, %v, want token-1, true", v, ok)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait() // let the reaper run
		select {
		case <-expired: // the reaper reclaimed the key and woke the watcher
		default:
			t.Fatal("watcher not woken 1ms after the deadline")
		}
		if n := e.Len(); n != 0 {
			t.Fatalf("Len() = %d, want 0", n)
		}
	})
}
