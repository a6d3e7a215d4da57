package engine

// Focused unit tests of the Redis rules, each against a mock clock at a
// realistic date. The broad model, linearizability and differential checks
// live in the package engine_test files.

import (
	"errors"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
)

// t0 is the mock clock's start: a realistic date, so overflow checks see a
// "now" of the right magnitude.
var t0 = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

// newTestEngine returns an engine on a mock clock set to t0, closed at the
// end of the test.
func newTestEngine(t testing.TB) (*Engine, *clock.Mock) {
	t.Helper()
	mc := clock.NewMock()
	mc.Set(t0)
	e := New(Options{Clock: mc})
	t.Cleanup(func() { e.Close() })
	return e, mc
}

func wantGet(t *testing.T, e *Engine, key, want string, wantOK bool) {
	t.Helper()
	if got, ok := e.Get(key); got != want || ok != wantOK {
		t.Fatalf("Get(%q) = %q, %v, want %q, %v", key, got, ok, want, wantOK)
	}
}

func wantPTTL(t *testing.T, e *Engine, key string, want time.Duration, wantOK bool) {
	t.Helper()
	if got, ok := e.PTTL(key); got != want || ok != wantOK {
		t.Fatalf("PTTL(%q) = %v, %v, want %v, %v", key, got, ok, want, wantOK)
	}
}

func TestExpiryBoundary(t *testing.T) {
	e, mc := newTestEngine(t)
	if err := e.SetPX("k", "v", 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	wantPTTL(t, e, "k", 100*time.Millisecond, true)
	mc.Add(100 * time.Millisecond) // now == D: still alive, PTTL 0
	wantPTTL(t, e, "k", 0, true)
	wantGet(t, e, "k", "v", true)
	mc.Add(time.Nanosecond) // now > D: gone
	wantGet(t, e, "k", "", false)
	wantPTTL(t, e, "k", 0, false)
	if e.Exists("k") {
		t.Fatal("Exists after deadline = true, want false")
	}
}

func TestExpiredKeyIsAbsentForWrites(t *testing.T) {
	type step func(e *Engine) (got, want any)
	tests := []struct {
		name string
		op   step
	}{
		{"SetNX", func(e *Engine) (any, any) { ok, _ := e.SetNX("k", "new"); return ok, true }},
		{"SetNXPX", func(e *Engine) (any, any) { ok, _ := e.SetNXPX("k", "new", time.Second); return ok, true }},
		{"GetSet", func(e *Engine) (any, any) { _, ok, _ := e.GetSet("k", "new"); return ok, false }},
		{"GetDel", func(e *Engine) (any, any) { _, ok := e.GetDel("k"); return ok, false }},
		{"CompareAndDelete", func(e *Engine) (any, any) { return e.CompareAndDelete("k", "old"), false }},
		{"CompareAndSwap", func(e *Engine) (any, any) { ok, _ := e.CompareAndSwap("k", "old", "new"); return ok, false }},
		{"CompareAndPExpire", func(e *Engine) (any, any) {
			ok, _ := e.CompareAndPExpire("k", "old", time.Second)
			return ok, false
		}},
		{"Del", func(e *Engine) (any, any) { return e.Del("k"), 0 }},
		{"Del2", func(e *Engine) (any, any) { return e.Del("k", "other"), 0 }},
		{"PExpire", func(e *Engine) (any, any) { ok, _ := e.PExpire("k", time.Second); return ok, false }},
		{"PExpireNeg", func(e *Engine) (any, any) { ok, _ := e.PExpire("k", -1); return ok, false }},
		{"Persist", func(e *Engine) (any, any) { return e.Persist("k"), false }},
		{"IncrBy", func(e *Engine) (any, any) { n, _ := e.IncrBy("k", 5); return n, int64(5) }},
		{"SetXX", func(e *Engine) (any, any) {
			r, _ := e.SetWith("k", "new", SetArgs{Cond: IfPresent})
			return r, SetResult{}
		}},
		{"SetIFEQ", func(e *Engine) (any, any) {
			r, _ := e.SetWith("k", "new", SetArgs{Cond: IfEqual, Match: "old"})
			return r, SetResult{}
		}},
		{"SetIFNE", func(e *Engine) (any, any) {
			r, _ := e.SetWith("k", "new", SetArgs{Cond: IfNotEqual, Match: "old"})
			return r, SetResult{Written: true}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, mc := newTestEngine(t)
			e.SetPX("k", "old", time.Millisecond)
			mc.Add(2 * time.Millisecond)
			if got, want := tt.op(e); got != want {
				t.Fatalf("%s on expired key = %v, want %v", tt.name, got, want)
			}
		})
	}
}

func TestInvalidTTLChangesNothing(t *testing.T) {
	tests := []struct {
		name string
		op   func(e *Engine) error
	}{
		{"SetPX0", func(e *Engine) error { return e.SetPX("k", "x", 0) }},
		{"SetPXNeg", func(e *Engine) error { return e.SetPX("k", "x", -time.Second) }},
		{"SetPXOverflow", func(e *Engine) error { return e.SetPX("k", "x", math.MaxInt64) }},
		{"SetNXPX0", func(e *Engine) error { _, err := e.SetNXPX("k", "x", 0); return err }},
		{"SetNXPXOverflow", func(e *Engine) error { _, err := e.SetNXPX("k", "x", math.MaxInt64); return err }},
		{"CAPExpire0", func(e *Engine) error { _, err := e.CompareAndPExpire("k", "v", 0); return err }},
		{"CAPExpireOverflow", func(e *Engine) error {
			_, err := e.CompareAndPExpire("k", "v", math.MaxInt64)
			return err
		}},
		{"PExpireCondOverflow", func(e *Engine) error {
			_, err := e.PExpireCond("k", math.MaxInt64, ExpireAlways)
			return err
		}},
		{"SetWithNegTTL", func(e *Engine) error { _, err := e.SetWith("k", "x", SetArgs{TTL: -1}); return err }},
		{"SetWithTTLOverflow", func(e *Engine) error {
			_, err := e.SetWith("k", "x", SetArgs{TTL: math.MaxInt64})
			return err
		}},
		{"SetWithAtEpoch", func(e *Engine) error {
			_, err := e.SetWith("k", "x", SetArgs{At: time.Unix(0, 0)})
			return err
		}},
		{"SetWithAtFar", func(e *Engine) error {
			_, err := e.SetWith("k", "x", SetArgs{At: time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)})
			return err
		}},
		// Invalid expiry is checked before the condition, as in Redis.
		{"SetNXWithNegTTL", func(e *Engine) error {
			_, err := e.SetWith("k", "x", SetArgs{Cond: IfAbsent, TTL: -1})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := newTestEngine(t)
			e.SetPX("k", "v", time.Minute)
			if err := tt.op(e); !errors.Is(err, ErrInvalidTTL) {
				t.Fatalf("%s = %v, want ErrInvalidTTL", tt.name, err)
			}
			wantGet(t, e, "k", "v", true)
			wantPTTL(t, e, "k", time.Minute, true)
		})
	}
}

// TestPExpireBeyondRange: a deadline past the engine's time range is an
// error that changes nothing, never a false that reads as "no such key".
func TestPExpireBeyondRange(t *testing.T) {
	e, _ := newTestEngine(t)
	e.SetPX("k", "v", time.Minute)
	if ok, err := e.PExpire("k", math.MaxInt64); ok || !errors.Is(err, ErrInvalidTTL) {
		t.Fatalf("PExpire(overflow) = %v, %v, want false, ErrInvalidTTL", ok, err)
	}
	if ok, err := e.PExpireAt("k", time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)); ok || !errors.Is(err, ErrInvalidTTL) {
		t.Fatalf("PExpireAt(2300) = %v, %v, want false, ErrInvalidTTL", ok, err)
	}
	if ok, err := e.PExpireAtCond("absent", time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC), ExpireNX); ok || !errors.Is(err, ErrInvalidTTL) {
		t.Fatalf("PExpireAtCond(absent, 2300) = %v, %v, want false, ErrInvalidTTL", ok, err)
	}
	wantPTTL(t, e, "k", time.Minute, true)
}

func TestSetWithSyntax(t *testing.T) {
	at := t0.Add(time.Minute)
	tests := []struct {
		name string
		args SetArgs
	}{
		{"TTLAndAt", SetArgs{TTL: time.Second, At: at}},
		{"KeepTTLAndTTL", SetArgs{KeepTTL: true, TTL: time.Second}},
		{"KeepTTLAndAt", SetArgs{KeepTTL: true, At: at}},
		{"BadCond", SetArgs{Cond: IfNotEqual + 1}},
		// Syntax errors come before invalid-expire errors, as Redis parses first.
		{"NegTTLAndAt", SetArgs{TTL: -1, At: at}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := newTestEngine(t)
			e.Set("k", "v")
			if _, err := e.SetWith("k", "x", tt.args); !errors.Is(err, ErrSyntax) {
				t.Fatalf("SetWith(%+v) = %v, want ErrSyntax", tt.args, err)
			}
			wantGet(t, e, "k", "v", true)
		})
	}
	e, _ := newTestEngine(t)
	if _, err := e.PExpireCond("k", time.Second, ExpireLT+1); !errors.Is(err, ErrSyntax) {
		t.Fatalf("PExpireCond(bad cond) = %v, want ErrSyntax", err)
	}
}

func TestSetWith(t *testing.T) {
	const (
		absent = iota
		plain  // "old", no TTL
		ttl    // "old", TTL 1 min
	)
	at := t0.Add(30 * time.Second)
	tests := []struct {
		name     string
		start    int
		args     SetArgs
		want     SetResult
		wantVal  string
		wantOK   bool
		wantPTTL time.Duration
	}{
		{"SetAbsent", absent, SetArgs{}, SetResult{Written: true}, "new", true, NoExpiry},
		{"SetClearsTTL", ttl, SetArgs{}, SetResult{true, "old", true}, "new", true, NoExpiry},
		{"SetKeepTTL", ttl, SetArgs{KeepTTL: true}, SetResult{true, "old", true}, "new", true, time.Minute},
		{"SetKeepTTLNoTTL", plain, SetArgs{KeepTTL: true}, SetResult{true, "old", true}, "new", true, NoExpiry},
		{"SetKeepTTLAbsent", absent, SetArgs{KeepTTL: true}, SetResult{Written: true}, "new", true, NoExpiry},
		{"SetPX", plain, SetArgs{TTL: time.Second}, SetResult{true, "old", true}, "new", true, time.Second},
		{"SetPXAT", plain, SetArgs{At: at}, SetResult{true, "old", true}, "new", true, 30 * time.Second},
		{"SetPXATNow", plain, SetArgs{At: t0}, SetResult{true, "old", true}, "new", true, 0},
		{"SetPXATPast", plain, SetArgs{At: t0.Add(-time.Second)}, SetResult{true, "old", true}, "", false, 0},
		{"SetPXATPastAbsent", absent, SetArgs{At: t0.Add(-time.Second)}, SetResult{Written: true}, "", false, 0},
		{"NXAbsent", absent, SetArgs{Cond: IfAbsent, TTL: time.Second}, SetResult{Written: true}, "new", true, time.Second},
		{"NXPresent", ttl, SetArgs{Cond: IfAbsent}, SetResult{false, "old", true}, "old", true, time.Minute},
		{"XXAbsent", absent, SetArgs{Cond: IfPresent}, SetResult{}, "", false, 0},
		{"XXPresent", ttl, SetArgs{Cond: IfPresent}, SetResult{true, "old", true}, "new", true, NoExpiry},
		{"IFEQMatch", ttl, SetArgs{Cond: IfEqual, Match: "old", TTL: 5 * time.Second}, SetResult{true, "old", true}, "new", true, 5 * time.Second},
		{"IFEQMismatch", ttl, SetArgs{Cond: IfEqual, Match: "x"}, SetResult{false, "old", true}, "old", true, time.Minute},
		{"IFEQAbsent", absent, SetArgs{Cond: IfEqual, Match: ""}, SetResult{}, "", false, 0},
		{"IFNEMatch", ttl, SetArgs{Cond: IfNotEqual, Match: "old"}, SetResult{false, "old", true}, "old", true, time.Minute},
		{"IFNEMismatch", ttl, SetArgs{Cond: IfNotEqual, Match: "x"}, SetResult{true, "old", true}, "new", true, NoExpiry},
		{"IFNEAbsent", absent, SetArgs{Cond: IfNotEqual, Match: "x"}, SetResult{Written: true}, "new", true, NoExpiry},
		// A failed condition still validates the expiry and returns the old value.
		{"NXFailKeepTTL", plain, SetArgs{Cond: IfAbsent, KeepTTL: true}, SetResult{false, "old", true}, "old", true, NoExpiry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := newTestEngine(t)
			switch tt.start {
			case plain:
				e.Set("k", "old")
			case ttl:
				e.SetPX("k", "old", time.Minute)
			}
			got, err := e.SetWith("k", "new", tt.args)
			if err != nil || got != tt.want {
				t.Fatalf("SetWith(%+v) = %+v, %v, want %+v, nil", tt.args, got, err, tt.want)
			}
			wantGet(t, e, "k", tt.wantVal, tt.wantOK)
			wantPTTL(t, e, "k", tt.wantPTTL, tt.wantOK)
		})
	}
}

func TestPExpireCond(t *testing.T) {
	const (
		absent = iota
		plain  // no TTL
		ttl    // TTL 10 s
	)
	tests := []struct {
		name     string
		start    int
		ttl      time.Duration
		cond     ExpireCond
		want     bool
		wantOK   bool // key exists afterwards
		wantPTTL time.Duration
	}{
		{"AbsentAlways", absent, time.Second, ExpireAlways, false, false, 0},
		{"Always", plain, time.Second, ExpireAlways, true, true, time.Second},
		{"AlwaysZeroDeletes", plain, 0, ExpireAlways, true, false, 0},
		{"AlwaysNegDeletes", ttl, -time.Second, ExpireAlways, true, false, 0},
		{"NXNoTTL", plain, time.Second, ExpireNX, true, true, time.Second},
		{"NXWithTTL", ttl, time.Second, ExpireNX, false, true, 10 * time.Second},
		{"XXNoTTL", plain, time.Second, ExpireXX, false, true, NoExpiry},
		{"XXWithTTL", ttl, time.Second, ExpireXX, true, true, time.Second},
		{"GTNoTTL", plain, time.Hour, ExpireGT, false, true, NoExpiry},
		{"GTLater", ttl, 20 * time.Second, ExpireGT, true, true, 20 * time.Second},
		{"GTEqual", ttl, 10 * time.Second, ExpireGT, false, true, 10 * time.Second},
		{"GTEarlier", ttl, time.Second, ExpireGT, false, true, 10 * time.Second},
		{"LTNoTTL", plain, time.Hour, ExpireLT, true, true, time.Hour},
		{"LTEarlier", ttl, time.Second, ExpireLT, true, true, time.Second},
		{"LTLater", ttl, 20 * time.Second, ExpireLT, false, true, 10 * time.Second},
		// The condition is checked before a past deadline deletes (Redis order).
		{"LTPastDeletes", ttl, -time.Second, ExpireLT, true, false, 0},
		{"GTPastFails", ttl, -time.Second, ExpireGT, false, true, 10 * time.Second},
		{"NXPastDeletes", plain, 0, ExpireNX, true, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := newTestEngine(t)
			switch tt.start {
			case plain:
				e.Set("k", "v")
			case ttl:
				e.SetPX("k", "v", 10*time.Second)
			}
			got, err := e.PExpireCond("k", tt.ttl, tt.cond)
			if err != nil || got != tt.want {
				t.Fatalf("PExpireCond(%v, %d) = %v, %v, want %v, nil", tt.ttl, tt.cond, got, err, tt.want)
			}
			wantPTTL(t, e, "k", tt.wantPTTL, tt.wantOK)
		})
	}
}

func TestPExpireAt(t *testing.T) {
	e, mc := newTestEngine(t)
	if ok, _ := e.PExpireAt("k", t0.Add(time.Second)); ok {
		t.Fatal("PExpireAt(absent) = true, want false")
	}
	e.Set("k", "v")
	if ok, _ := e.PExpireAt("k", t0.Add(time.Second)); !ok {
		t.Fatal("PExpireAt(future) = false, want true")
	}
	wantPTTL(t, e, "k", time.Second, true)
	// A deadline equal to now deletes at once (Redis checkAlreadyExpired uses <=).
	if ok, _ := e.PExpireAt("k", mc.Now()); !ok {
		t.Fatal("PExpireAt(now) = false, want true")
	}
	wantGet(t, e, "k", "", false)
	e.Set("k", "v")
	if ok, _ := e.PExpireAt("k", time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)); !ok {
		t.Fatal("PExpireAt(1500) = false, want true")
	}
	wantGet(t, e, "k", "", false)
	if e.Len() != 0 {
		t.Fatalf("Len() = %d, want 0", e.Len())
	}
}

func TestTTLCommands(t *testing.T) {
	e, mc := newTestEngine(t)
	wantPTTL(t, e, "k", 0, false)
	e.Set("k", "v")
	wantPTTL(t, e, "k", NoExpiry, true)
	if e.Persist("k") {
		t.Fatal("Persist(no TTL) = true, want false")
	}
	if ok, _ := e.PExpire("k", time.Second); !ok {
		t.Fatal("PExpire = false, want true")
	}
	mc.Add(400 * time.Millisecond)
	wantPTTL(t, e, "k", 600*time.Millisecond, true)
	if !e.Persist("k") {
		t.Fatal("Persist(TTL) = false, want true")
	}
	wantPTTL(t, e, "k", NoExpiry, true)
	mc.Add(time.Hour)
	wantGet(t, e, "k", "v", true)

	// GetSet clears the TTL; CompareAndSwap keeps it; SetNX never touches it.
	e.SetPX("k", "a", time.Minute)
	if old, ok, _ := e.GetSet("k", "b"); old != "a" || !ok {
		t.Fatalf("GetSet = %q, %v, want a, true", old, ok)
	}
	wantPTTL(t, e, "k", NoExpiry, true)
	e.SetPX("k", "a", time.Minute)
	if ok, _ := e.CompareAndSwap("k", "a", "c"); !ok {
		t.Fatal("CompareAndSwap(match) = false, want true")
	}
	if ok, _ := e.CompareAndSwap("k", "a", "d"); ok {
		t.Fatal("CompareAndSwap(mismatch) = true, want false")
	}
	wantPTTL(t, e, "k", time.Minute, true)
	wantGet(t, e, "k", "c", true)
	if ok, _ := e.SetNX("k", "z"); ok {
		t.Fatal("SetNX(existing) = true, want false")
	}
	wantPTTL(t, e, "k", time.Minute, true)
	e.Del("k")
	if ok, _ := e.SetNX("k", "z"); !ok {
		t.Fatal("SetNX(absent) = false, want true")
	}
	wantPTTL(t, e, "k", NoExpiry, true)
}

func TestLockPattern(t *testing.T) {
	e, mc := newTestEngine(t)
	if ok, err := e.SetNXPX("lock", "tok1", 30*time.Second); !ok || err != nil {
		t.Fatalf("SetNXPX = %v, %v, want true, nil", ok, err)
	}
	if ok, _ := e.SetNXPX("lock", "tok2", 30*time.Second); ok {
		t.Fatal("second SetNXPX = true, want false")
	}
	mc.Add(20 * time.Second)
	if ok, err := e.CompareAndPExpire("lock", "tok2", time.Minute); ok || err != nil {
		t.Fatalf("CompareAndPExpire(wrong token) = %v, %v, want false, nil", ok, err)
	}
	if ok, err := e.CompareAndPExpire("lock", "tok1", 30*time.Second); !ok || err != nil {
		t.Fatalf("CompareAndPExpire = %v, %v, want true, nil", ok, err)
	}
	mc.Add(20 * time.Second) // 40 s after acquisition, alive thanks to the refresh
	if e.CompareAndDelete("lock", "tok2") {
		t.Fatal("CompareAndDelete(wrong token) = true, want false")
	}
	if !e.CompareAndDelete("lock", "tok1") {
		t.Fatal("CompareAndDelete = false, want true")
	}
	if e.CompareAndDelete("lock", "tok1") {
		t.Fatal("CompareAndDelete(again) = true, want false")
	}
	if ok, _ := e.SetNXPX("lock", "tok2", time.Second); !ok {
		t.Fatal("SetNXPX after release = false, want true")
	}
}

func TestDelExistsGetDel(t *testing.T) {
	e, mc := newTestEngine(t)
	e.Set("a", "1")
	e.Set("b", "2")
	e.SetPX("c", "3", time.Millisecond)
	e.Set("", "") // empty key and value are valid
	wantGet(t, e, "", "", true)
	mc.Add(2 * time.Millisecond)
	if n := e.Del("a", "a", "c", "missing", ""); n != 2 {
		t.Fatalf("Del(a, a, c, missing, \"\") = %d, want 2", n)
	}
	if n := e.Del(); n != 0 {
		t.Fatalf("Del() = %d, want 0", n)
	}
	if !e.Exists("b") || e.Exists("a") {
		t.Fatal("Exists wrong after Del")
	}
	if v, ok := e.GetDel("b"); v != "2" || !ok {
		t.Fatalf("GetDel(b) = %q, %v, want 2, true", v, ok)
	}
	if v, ok := e.GetDel("b"); v != "" || ok {
		t.Fatalf("GetDel(b) again = %q, %v, want \"\", false", v, ok)
	}
	// Many keys across all shards.
	keys := make([]string, 100)
	for i := range keys {
		keys[i] = "key" + strconv.Itoa(i)
		e.Set(keys[i], "v")
	}
	if n := e.Del(keys...); n != 100 {
		t.Fatalf("Del(100 keys) = %d, want 100", n)
	}
	if n := e.Len(); n != 0 {
		t.Fatalf("Len() = %d, want 0", n)
	}
}

func TestIncrBy(t *testing.T) {
	tests := []struct {
		start   string // "" with set=false: absent
		set     bool
		n       int64
		want    int64
		wantErr error
	}{
		{n: 5, want: 5},
		{set: true, start: "10", n: -15, want: -5},
		{set: true, start: "0", n: 1, want: 1},
		{set: true, start: "-9223372036854775808", n: 1, want: math.MinInt64 + 1},
		{set: true, start: "9223372036854775807", n: 0, want: math.MaxInt64},
		{set: true, start: "9223372036854775807", n: 1, wantErr: ErrOverflow},
		{set: true, start: "-9223372036854775808", n: -1, wantErr: ErrOverflow},
		{set: true, start: "9223372036854775808", n: 1, wantErr: ErrNotInteger},
		{set: true, start: "", n: 1, wantErr: ErrNotInteger},
		{set: true, start: "abc", n: 1, wantErr: ErrNotInteger},
		{set: true, start: " 1", n: 1, wantErr: ErrNotInteger},
		{set: true, start: "1 ", n: 1, wantErr: ErrNotInteger},
		{set: true, start: "+1", n: 1, wantErr: ErrNotInteger},
		{set: true, start: "01", n: 1, wantErr: ErrNotInteger},
		{set: true, start: "-0", n: 1, wantErr: ErrNotInteger},
		{set: true, start: "-", n: 1, wantErr: ErrNotInteger},
		{set: true, start: "1.5", n: 1, wantErr: ErrNotInteger},
		{set: true, start: "0x10", n: 1, wantErr: ErrNotInteger},
	}
	for _, tt := range tests {
		t.Run(strconv.Quote(tt.start), func(t *testing.T) {
			e, _ := newTestEngine(t)
			if tt.set {
				e.SetPX("k", tt.start, time.Minute)
			}
			got, err := e.IncrBy("k", tt.n)
			if got != tt.want || !errors.Is(err, tt.wantErr) {
				t.Fatalf("IncrBy(%q, %d) = %d, %v, want %d, %v", tt.start, tt.n, got, err, tt.want, tt.wantErr)
			}
			switch {
			case tt.wantErr != nil:
				wantGet(t, e, "k", tt.start, true) // unchanged
				wantPTTL(t, e, "k", time.Minute, true)
			case tt.set:
				wantGet(t, e, "k", strconv.FormatInt(tt.want, 10), true)
				wantPTTL(t, e, "k", time.Minute, true) // TTL kept
			default:
				wantPTTL(t, e, "k", NoExpiry, true)
			}
		})
	}
}

// TestClockReads checks that each operation reads the clock at most once and
// only when it needs the time.
func TestClockReads(t *testing.T) {
	e, _ := newTestEngine(t)
	reads := 0
	SetNowHook(e, func(now int64) {
		// An operation whose lock-free read was overtaken (by the reaper,
		// say) retracts its reading before it reads again under the lock:
		// one reading used, as the linearizability check counts it.
		if now == noDeadline {
			reads--
			return
		}
		reads++
	})
	check := func(name string, want int, op func()) {
		t.Helper()
		reads = 0
		op()
		if reads != want {
			t.Errorf("%s read the clock %d times, want %d", name, reads, want)
		}
	}
	check("Set", 0, func() { e.Set("p", "v") })
	check("Set(TTL)", 0, func() { e.SetNXPX("q", "v", time.Minute); reads = 0; e.Set("q", "v") })
	check("Get(no TTL)", 0, func() { e.Get("p") })
	check("SetNX(no TTL)", 0, func() { e.SetNX("p", "v") })
	check("GetSet(no TTL)", 0, func() { e.GetSet("p", "v") })
	check("CompareAndDelete(absent)", 0, func() { e.CompareAndDelete("absent", "v") })
	check("SetNXPX", 1, func() { e.SetNXPX("t", "v", time.Minute) })
	check("Get(TTL)", 1, func() { e.Get("t") })
	check("SetPX(TTL)", 1, func() { e.SetPX("t", "v", time.Minute) })
	check("PTTL(TTL)", 1, func() { e.PTTL("t") })
	check("PExpireCond(TTL)", 1, func() { e.PExpireCond("t", time.Minute, ExpireGT) })
	check("SetWith(At)", 1, func() { e.SetWith("t", "v", SetArgs{At: t0.Add(time.Hour), Cond: IfEqual, Match: "v"}) })
	check("Del(2 keys with TTL)", 1, func() { e.SetNXPX("u", "v", time.Minute); reads = 0; e.Del("t", "u") })
	check("Reap", 1, func() { e.Reap() })
}

func TestReap(t *testing.T) {
	e, mc := newTestEngine(t)
	e.Close() // only Reap reclaims: deterministic
	for i := range 100 {
		e.SetPX("k"+strconv.Itoa(i), "v", time.Duration(i+1)*time.Second)
	}
	e.Set("forever", "v")
	if n := e.Reap(); n != 0 {
		t.Fatalf("Reap() before any deadline = %d, want 0", n)
	}
	mc.Add(50 * time.Second) // keys 0..48 have deadline < now, key 49 == now
	if got := e.Len(); got != 101 {
		t.Fatalf("Len() before Reap = %d, want 101 (expired keys count until reclaimed)", got)
	}
	if n := e.Reap(); n != 49 {
		t.Fatalf("Reap() = %d, want 49", n)
	}
	if got := e.Len(); got != 52 {
		t.Fatalf("Len() after Reap = %d, want 52", got)
	}
	wantGet(t, e, "k49", "v", true)
	mc.Add(time.Hour)
	if n := e.Reap(); n != 51 {
		t.Fatalf("Reap() = %d, want 51", n)
	}
	if n := e.Reap(); n != 0 {
		t.Fatalf("Reap() again = %d, want 0", n)
	}
	wantGet(t, e, "forever", "v", true)
}

// TestLazyExpiryCancelsTimer checks that a key deleted lazily, overwritten
// or persisted is not reclaimed again by the wheel.
func TestLazyExpiryCancelsTimer(t *testing.T) {
	e, mc := newTestEngine(t)
	e.Close()
	e.SetPX("a", "v", time.Second)
	e.SetPX("b", "v", time.Second)
	e.SetPX("c", "v", time.Second)
	mc.Add(2 * time.Second)
	wantGet(t, e, "a", "", false) // lazily deleted
	e.Set("b", "new")             // expired: replaced, no TTL
	if n := e.Reap(); n != 1 {
		t.Fatalf("Reap() = %d, want 1 (only c)", n)
	}
	wantGet(t, e, "b", "new", true)
	e.SetPX("d", "v", time.Second)
	e.Persist("d")
	mc.Add(2 * time.Second)
	if n := e.Reap(); n != 0 {
		t.Fatalf("Reap() after Persist = %d, want 0", n)
	}
	wantGet(t, e, "d", "v", true)
}

func TestOptions(t *testing.T) {
	for _, n := range []int{0, 1, 3, 64} {
		e := New(Options{Shards: n, Tick: 4 * time.Millisecond})
		e.Set("k", "v")
		wantGet(t, e, "k", "v", true)
		got := e.m.Shards()
		if got&(got-1) != 0 || got < n {
			t.Errorf("New(Shards: %d) has %d shards, want a power of two >= %d", n, got, n)
		}
		e.Close()
	}
}

func TestRealClock(t *testing.T) {
	e := New(Options{})
	defer e.Close()
	before := time.Now().UnixNano()
	var got int64
	SetNowHook(e, func(now int64) { got = now })
	e.SetNXPX("k", "v", time.Hour)
	after := time.Now().UnixNano()
	// The fast clock is wall time at New plus monotonic time since: within
	// a generous margin of time.Now (wall-clock steps could move it).
	if got < before-int64(time.Second) || got > after+int64(time.Second) {
		t.Fatalf("clock read %d, want within [%d, %d]", got, before, after)
	}
	if ttl, ok := e.PTTL("k"); !ok || ttl <= 59*time.Minute || ttl > time.Hour {
		t.Fatalf("PTTL = %v, %v, want about 1h, true", ttl, ok)
	}
}

func TestCloseIdempotent(t *testing.T) {
	e, _ := newTestEngine(t)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// The engine still serves calls after Close.
	e.Set("k", "v")
	wantGet(t, e, "k", "v", true)
}

// TestZeroAllocs checks the allocation-free paths: reads, in-place
// overwrites, and lock cycles whose nodes are recycled by the shard.
func TestZeroAllocs(t *testing.T) {
	e, _ := newTestEngine(t)
	e.Set("k", "v")
	e.SetPX("t", "v", time.Hour)
	e.SetNXPX("lock", "tok", time.Second) // warm the recycler and the wheel
	e.CompareAndDelete("lock", "tok")
	tests := []struct {
		name string
		op   func()
	}{
		{"Get", func() { e.Get("k") }},
		{"GetTTL", func() { e.Get("t") }},
		{"Set", func() { e.Set("k", "w") }},
		{"GetSet", func() { e.GetSet("k", "v") }},
		{"SetPX", func() { e.SetPX("t", "w", time.Hour) }},
		{"CompareAndDelete(mismatch)", func() { e.CompareAndDelete("k", "x") }},
		{"CompareAndPExpire", func() { e.CompareAndPExpire("t", "w", time.Hour) }},
		{"SetNX(existing)", func() { e.SetNX("k", "x") }},
		{"LockCycle", func() {
			e.SetNXPX("lock", "tok", time.Second)
			e.CompareAndDelete("lock", "tok")
		}},
		{"SetNXDel", func() {
			e.SetNX("n", "v")
			e.Del("n")
		}},
	}
	for _, tt := range tests {
		if got := testing.AllocsPerRun(100, tt.op); got != 0 {
			t.Errorf("%s allocates %v times per run, want 0", tt.name, got)
		}
	}
}

func TestGetPTTL(t *testing.T) {
	e, mc := newTestEngine(t)
	check := func(wantV string, wantTTL time.Duration, wantOK bool) {
		t.Helper()
		if v, ttl, ok := e.GetPTTL("k"); v != wantV || ttl != wantTTL || ok != wantOK {
			t.Fatalf("GetPTTL(k) = %q, %v, %v, want %q, %v, %v", v, ttl, ok, wantV, wantTTL, wantOK)
		}
	}
	check("", 0, false)
	e.Set("k", "v")
	check("v", NoExpiry, true)
	e.SetPX("k", "w", time.Second)
	mc.Add(time.Second)
	check("w", 0, true) // at the deadline
	mc.Add(time.Nanosecond)
	check("", 0, false)
	if e.Len() != 0 {
		t.Fatalf("Len() = %d, want 0 (GetPTTL deletes an expired key)", e.Len())
	}
}
