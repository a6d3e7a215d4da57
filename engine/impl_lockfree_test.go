package engine

import (
	"testing"
	"time"
)

// TestHeldKeyTakesNoLock: the outcomes the package doc lists as lock-free
// (reads, and SetNX, SetNXPX, SetNXPXFenced and CompareAndDelete finding the
// key held or holding another value) leave the key's shard version as it
// was, for keys with and without a deadline: they neither lock the shard
// nor make concurrent readers retry.
func TestHeldKeyTakesNoLock(t *testing.T) {
	e, _ := newTestEngine(t)
	e.Set("plain", "v")
	if err := e.SetPX("timed", "v", time.Hour); err != nil {
		t.Fatal(err)
	}
	ops := []struct {
		name string
		op   func(key string) any
	}{
		{"Get", func(k string) any { v, ok := e.Get(k); return both(v, ok) }},
		{"Exists", func(k string) any { return e.Exists(k) }},
		{"GetPTTL", func(k string) any { _, _, ok := e.GetPTTL(k); return ok }},
		{"ExpireTime", func(k string) any { _, ok := e.ExpireTime(k); return ok }},
		{"SetNX", func(k string) any { return e.SetNX(k, "w") }},
		{"SetNXPX", func(k string) any { ok, err := e.SetNXPX(k, "w", time.Second); return both(ok, err) }},
		{"SetNXPXFenced", func(k string) any {
			f, ok, err := e.SetNXPXFenced(k, "w", time.Second)
			return both(f, both(ok, err))
		}},
		{"CompareAndDelete(other value)", func(k string) any { return e.CompareAndDelete(k, "other") }},
	}
	for _, key := range []string{"plain", "timed"} {
		for _, tt := range ops {
			h := e.m.Hash(key)
			s, _ := e.m.Shard(h)
			v, ok := s.ReadVersion()
			if !ok {
				t.Fatalf("shard of %q is locked", key)
			}
			got := tt.op(key)
			if !s.Unchanged(v) {
				t.Errorf("%s(%q) = %v locked the shard; the key is held, so it should not", tt.name, key, got)
			}
		}
	}
}

func both(a, b any) [2]any { return [2]any{a, b} }
