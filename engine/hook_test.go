//go:build nxkv_testhooks

package engine

import (
	"testing"
	"time"
)

// TestUpgradeSeesWritesAfterLookup: an operation that decided from a
// lock-free lookup must not act on it if another writer changed the shard
// before it took the lock. The hook runs that writer exactly there (built
// with -tags nxkv_testhooks). An insert at the looked-up position without
// the check stored the key twice and reported a second lock holder.
func TestUpgradeSeesWritesAfterLookup(t *testing.T) {
	tests := []struct {
		name  string
		setup func(e *Engine)
		racer func(e *Engine) // the write that lands between lookup and lock
		op    func(e *Engine) bool
		want  bool
		holds string // the value key holds afterwards ("" for absent)
	}{
		{
			name:  "SetNX of an absent key, created meanwhile",
			racer: func(e *Engine) { e.SetNX("k", "other") },
			op:    func(e *Engine) bool { ok, _ := e.SetNX("k", "mine"); return ok },
			want:  false, holds: "other",
		},
		{
			name:  "SetNXPX of an absent key, created meanwhile",
			racer: func(e *Engine) { e.SetNX("k", "other") },
			op: func(e *Engine) bool {
				ok, _ := e.SetNXPX("k", "mine", time.Minute)
				return ok
			},
			want: false, holds: "other",
		},
		{
			name:  "CompareAndDelete, value replaced meanwhile",
			setup: func(e *Engine) { e.Set("k", "tok") },
			racer: func(e *Engine) { e.Set("k", "new") },
			op:    func(e *Engine) bool { return e.CompareAndDelete("k", "tok") },
			want:  false, holds: "new",
		},
		{
			name:  "CompareAndDelete with a TTL, value replaced meanwhile",
			setup: func(e *Engine) { _ = e.SetPX("k", "tok", time.Minute) },
			racer: func(e *Engine) { e.Set("k", "new") },
			op:    func(e *Engine) bool { return e.CompareAndDelete("k", "tok") },
			want:  false, holds: "new",
		},
		{
			name:  "CompareAndDelete, key deleted and taken again meanwhile",
			setup: func(e *Engine) { e.Set("k", "tok") },
			racer: func(e *Engine) { e.Del("k"); e.SetNX("k", "tok2") },
			op:    func(e *Engine) bool { return e.CompareAndDelete("k", "tok") },
			want:  false, holds: "tok2",
		},
	}
	t.Cleanup(func() { lookupHook = nil })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := New(Options{})
			defer e.Close()
			if tt.setup != nil {
				tt.setup(e)
			}
			fired := false
			lookupHook = func() {
				if !fired {
					fired = true // the racer's own lookups run no racer
					tt.racer(e)
				}
			}
			got := tt.op(e)
			lookupHook = nil
			if !fired {
				t.Fatal("the operation made no lock-free lookup: the race went untested")
			}
			if got != tt.want {
				t.Errorf("op = %v, want %v", got, tt.want)
			}
			if v, ok := e.Get("k"); v != tt.holds || ok != (tt.holds != "") {
				t.Errorf("Get(k) = %q, %v, want %q", v, ok, tt.holds)
			}
			if err := e.verify(); err != nil {
				t.Errorf("verify = %v, want nil", err)
			}
		})
	}
}
