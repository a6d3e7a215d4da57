package engine

import (
	"testing"
	"time"

	"github.com/nxkv/nxkv/shard"
)

// TestHeldKeyTakesNoLock: the outcomes the package doc lists as lock-free
// (reads, and SetNX, SetNXPX, SetNXPXFenced and CompareAndDelete finding the
// key held or holding another value) leave the key's shard version as it
// was, for keys with and without a deadline: they neither lock the shard
// nor make concurrent readers retry.
func TestHeldKeyTakesNoLock(t *testing.T) {
	if !shard.LockFreeReads {
		t.Skip("reads lock on this processor (shard.LockFreeReads is false)")
	}
	e, _ := newTestEngine(t)
	e.Close() // no reaper: it locks each shard as it scans
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
		{"SetNX", func(k string) any { ok, _ := e.SetNX(k, "w"); return ok }},
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

// TestCompareAndDeleteTimeAfterReaders: a compare-and-delete that finds its
// value acts on a lock-free lookup, so it must not judge the key alive at a
// time older than one a reader of the key used in between: that reader saw
// the key alive, so it comes before the delete, and the times along one
// key's history never decrease. The clock hook runs a reader (after moving
// the clock) whenever the delete reads the time while the shard is
// unlocked, which is exactly that window.
func TestCompareAndDeleteTimeAfterReaders(t *testing.T) {
	e, mc := newTestEngine(t)
	e.Close() // no reaper: only the operations below touch the shard
	if err := e.SetPX("k", "tok", time.Second); err != nil {
		t.Fatal(err)
	}
	h := e.m.Hash("k")
	s, _ := e.m.Shard(h)
	var cadTime, readerTime int64
	reading := false
	SetNowHook(e, func(now int64) {
		if reading {
			readerTime = now
			return
		}
		cadTime = now
		if _, unlocked := s.ReadVersion(); unlocked && readerTime == 0 {
			reading = true
			mc.Add(500 * time.Millisecond)
			if _, ok := e.PTTL("k"); !ok {
				t.Fatal("PTTL(k) inside the delete = absent, want alive")
			}
			reading = false
		}
	})
	if !e.CompareAndDelete("k", "tok") {
		t.Fatal(`CompareAndDelete("k", "tok") = false, want true`)
	}
	if readerTime > cadTime {
		t.Fatalf("CompareAndDelete used time %v after a reader saw the key alive at %v: time ran backwards along the key's history",
			time.Unix(0, cadTime).UTC(), time.Unix(0, readerTime).UTC())
	}
}
