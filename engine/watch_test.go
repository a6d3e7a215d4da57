package engine

import (
	"testing"
	"time"
)

// closed reports whether ch is closed, without blocking.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// waitClosed waits for ch to close. The timeout only keeps a broken engine
// from hanging the test binary; correctness never depends on it.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: watch channel not closed", what)
	}
}

func TestWatchChanges(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(e *Engine)
		op      func(e *Engine)
		changed bool
	}{
		{"SetAbsent", nil, func(e *Engine) { e.Set("k", "v") }, true},
		{"SetSameValue", func(e *Engine) { e.Set("k", "v") }, func(e *Engine) { e.Set("k", "v") }, true},
		{"SetNXFail", func(e *Engine) { e.Set("k", "v") }, func(e *Engine) { e.SetNX("k", "x") }, false},
		{"SetNXPX", nil, func(e *Engine) { e.SetNXPX("k", "v", time.Second) }, true},
		{"SetPXInvalid", func(e *Engine) { e.Set("k", "v") }, func(e *Engine) { e.SetPX("k", "v", 0) }, false},
		{"Get", func(e *Engine) { e.Set("k", "v") }, func(e *Engine) { e.Get("k") }, false},
		{"PTTL", func(e *Engine) { e.Set("k", "v") }, func(e *Engine) { e.PTTL("k") }, false},
		{"Del", func(e *Engine) { e.Set("k", "v") }, func(e *Engine) { e.Del("k") }, true},
		{"DelMulti", func(e *Engine) { e.Set("k", "v") }, func(e *Engine) { e.Del("a", "k", "b") }, true},
		{"DelAbsent", nil, func(e *Engine) { e.Del("k") }, false},
		{"OtherKey", nil, func(e *Engine) { e.Set("other", "v") }, false},
		{"GetDel", func(e *Engine) { e.Set("k", "v") }, func(e *Engine) { e.GetDel("k") }, true},
		{"GetSet", func(e *Engine) { e.Set("k", "v") }, func(e *Engine) { e.GetSet("k", "w") }, true},
		{"CADMatch", func(e *Engine) { e.Set("k", "v") }, func(e *Engine) { e.CompareAndDelete("k", "v") }, true},
		{"CADMismatch", func(e *Engine) { e.Set("k", "v") }, func(e *Engine) { e.CompareAndDelete("k", "x") }, false},
		{"CAS", func(e *Engine) { e.Set("k", "v") }, func(e *Engine) { e.CompareAndSwap("k", "v", "w") }, true},
		{"CAPExpire", func(e *Engine) { e.Set("k", "v") }, func(e *Engine) { e.CompareAndPExpire("k", "v", time.Second) }, true},
		{"PExpire", func(e *Engine) { e.Set("k", "v") }, func(e *Engine) { e.PExpire("k", time.Second) }, true},
		{"PExpireGTFail", func(e *Engine) { e.Set("k", "v") }, func(e *Engine) { e.PExpireCond("k", time.Second, ExpireGT) }, false},
		{"PExpireAtPast", func(e *Engine) { e.Set("k", "v") }, func(e *Engine) { e.PExpireAt("k", t0.Add(-time.Hour)) }, true},
		{"Persist", func(e *Engine) { e.SetPX("k", "v", time.Second) }, func(e *Engine) { e.Persist("k") }, true},
		{"PersistNoTTL", func(e *Engine) { e.Set("k", "v") }, func(e *Engine) { e.Persist("k") }, false},
		{"IncrBy", func(e *Engine) { e.Set("k", "1") }, func(e *Engine) { e.IncrBy("k", 1) }, true},
		{"IncrByBad", func(e *Engine) { e.Set("k", "x") }, func(e *Engine) { e.IncrBy("k", 1) }, false},
		{"SetWithXXFail", nil, func(e *Engine) { e.SetWith("k", "v", SetArgs{Cond: IfPresent}) }, false},
		{"SetWithIFEQ", func(e *Engine) { e.Set("k", "v") }, func(e *Engine) { e.SetWith("k", "w", SetArgs{Cond: IfEqual, Match: "v"}) }, true},
		{"SetWithPastAt", func(e *Engine) { e.Set("k", "v") }, func(e *Engine) { e.SetWith("k", "w", SetArgs{At: t0.Add(-time.Hour)}) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := newTestEngine(t)
			if tt.setup != nil {
				tt.setup(e)
			}
			ch, stop := e.Watch("k")
			defer stop()
			tt.op(e)
			if got := closed(ch); got != tt.changed {
				t.Fatalf("%s: watch closed = %v, want %v", tt.name, got, tt.changed)
			}
		})
	}
}

func TestWatchExpiry(t *testing.T) {
	t.Run("Lazy", func(t *testing.T) {
		e, mc := newTestEngine(t)
		e.Close()
		e.SetPX("k", "v", time.Second)
		ch, stop := e.Watch("k")
		defer stop()
		mc.Add(time.Second)
		if closed(ch) {
			t.Fatal("watch closed at the deadline, want open (key alive while now <= D)")
		}
		mc.Add(time.Millisecond)
		if closed(ch) {
			t.Fatal("watch closed before any access or reap")
		}
		e.Get("k")
		if !closed(ch) {
			t.Fatal("watch open after lazy expiry")
		}
	})
	t.Run("Reap", func(t *testing.T) {
		e, mc := newTestEngine(t)
		e.Close()
		e.SetPX("k", "v", time.Second)
		ch, stop := e.Watch("k")
		defer stop()
		mc.Add(2 * time.Second)
		if n := e.Reap(); n != 1 {
			t.Fatalf("Reap() = %d, want 1", n)
		}
		if !closed(ch) {
			t.Fatal("watch open after Reap")
		}
	})
	t.Run("Reaper", func(t *testing.T) {
		e, mc := newTestEngine(t)
		e.SetPX("k", "v", 100*time.Millisecond)
		ch, stop := e.Watch("k")
		defer stop()
		// Within two ticks (about 2 ms) of the deadline, with no access.
		mc.Add(100*time.Millisecond + 2*time.Millisecond + time.Microsecond)
		waitClosed(t, ch, "reaper expiry")
		if n := e.Len(); n != 0 {
			t.Fatalf("Len() after reaper = %d, want 0", n)
		}
	})
	t.Run("ExpiredAtWatch", func(t *testing.T) {
		e, mc := newTestEngine(t)
		e.Close()
		e.SetPX("k", "v", time.Second)
		first, stop1 := e.Watch("k")
		defer stop1()
		mc.Add(2 * time.Second)
		second, stop2 := e.Watch("k") // finds the key expired: deletes it
		defer stop2()
		if !closed(first) {
			t.Fatal("earlier watch open after Watch found the key expired")
		}
		if closed(second) {
			t.Fatal("new watch closed at once")
		}
		if e.Len() != 0 {
			t.Fatalf("Len() = %d, want 0", e.Len())
		}
	})
}

func TestWatchStop(t *testing.T) {
	e, _ := newTestEngine(t)
	a, stopA := e.Watch("k")
	b, stopB := e.Watch("k")
	c, stopC := e.Watch("k")
	stopB()
	stopB() // idempotent
	e.Set("k", "v")
	if !closed(a) || !closed(c) {
		t.Fatal("remaining watchers not closed by a write")
	}
	if closed(b) {
		t.Fatal("stopped watcher closed")
	}
	stopA() // after firing: no-op
	stopC()
	s, _ := e.m.Shard(e.m.Hash("k"))
	s.Lock()
	n, obs := len(s.Aux.obs.watched()), s.Aux.obs
	s.Unlock()
	if n != 0 || obs != nil {
		t.Fatalf("shard holds %d watched keys (observers %p) after all fired or stopped, want 0 (nil)", n, obs)
	}
	// A watcher fires only once; a new Watch sees the next change.
	d, stopD := e.Watch("k")
	defer stopD()
	e.Set("k", "w")
	if !closed(d) {
		t.Fatal("second-generation watcher not closed")
	}
}
