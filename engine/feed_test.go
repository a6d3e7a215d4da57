package engine_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/nxkv/nxkv/engine"
)

// recorder is a listener that keeps every event.
type recorder struct {
	mu     sync.Mutex
	events []engine.Event
}

func (r *recorder) listen(ev engine.Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
}

// takeEvents returns the events recorded since the last take.
func (r *recorder) takeEvents() []engine.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev := r.events
	r.events = nil
	return ev
}

// take returns the events recorded since the last take as "kind key".
func (r *recorder) take() []string { return eventStrings(r.takeEvents()) }

func eventStrings(evs []engine.Event) []string {
	var s []string
	for _, ev := range evs {
		s = append(s, string(ev.Kind)+" "+ev.Key)
	}
	return s
}

// feedOps is what Engine and Tx share: a feed case runs on both.
type feedOps interface {
	Get(key string) (string, bool)
	Set(key, value string) error
	SetWith(key, value string, args engine.SetArgs) (engine.SetResult, error)
	SetNXPXFenced(key, value string, ttl time.Duration) (int64, bool, error)
	GetSet(key, value string) (string, bool, error)
	GetDel(key string) (string, bool)
	Del(keys ...string) int
	Exists(key string) bool
	PExpireCond(key string, ttl time.Duration, cond engine.ExpireCond) (bool, error)
	PExpireAtCond(key string, at time.Time, cond engine.ExpireCond) (bool, error)
	PTTL(key string) (time.Duration, bool)
	GetPTTL(key string) (string, time.Duration, bool)
	ExpireTime(key string) (time.Time, bool)
	Persist(key string) bool
	IncrBy(key string, n int64) (int64, error)
	CompareAndDelete(key, value string) bool
	CompareAndSwap(key, old, value string) (bool, error)
	CompareAndPExpire(key, value string, ttl time.Duration) (bool, error)
	Len() int
	Range(fn func(key string) bool)
	Flush()
}

var (
	_ feedOps = (*engine.Engine)(nil)
	_ feedOps = (*engine.Tx)(nil)
)

// Setups shared by the cases: k live without a TTL, with one, or expired
// (stored, deadline passed, not reclaimed: the engine's reaper is stopped).
func setK(e *engine.Engine, _ *clock.Mock)    { e.Set("k", "v") }
func setKTTL(e *engine.Engine, _ *clock.Mock) { _ = e.SetPX("k", "v", time.Minute) }
func expiredK(e *engine.Engine, clk *clock.Mock) {
	_ = e.SetPX("k", "v", time.Second)
	clk.Add(2 * time.Second)
}
func setKInt(e *engine.Engine, _ *clock.Mock) { e.Set("k", "41") }

// feedCase is one call and the events it must report, in order.
type feedCase struct {
	name  string
	setup func(*engine.Engine, *clock.Mock)
	op    func(s feedOps, now time.Time)
	want  []string
}

// feedCases covers every write, delete and read of the surface Engine and
// Tx share, in its succeeding and failing outcomes.
var feedCases = []feedCase{
	// Reads report nothing, except the reclamation of a key found expired.
	{"Get", setK, func(s feedOps, _ time.Time) { s.Get("k") }, nil},
	{"GetAbsent", nil, func(s feedOps, _ time.Time) { s.Get("k") }, nil},
	{"GetExpired", expiredK, func(s feedOps, _ time.Time) { s.Get("k") }, []string{"expired k"}},
	{"Exists", setKTTL, func(s feedOps, _ time.Time) { s.Exists("k") }, nil},
	{"ExistsExpired", expiredK, func(s feedOps, _ time.Time) { s.Exists("k") }, []string{"expired k"}},
	{"PTTL", setKTTL, func(s feedOps, _ time.Time) { s.PTTL("k") }, nil},
	{"PTTLExpired", expiredK, func(s feedOps, _ time.Time) { s.PTTL("k") }, []string{"expired k"}},
	{"GetPTTLExpired", expiredK, func(s feedOps, _ time.Time) { s.GetPTTL("k") }, []string{"expired k"}},
	{"ExpireTimeExpired", expiredK, func(s feedOps, _ time.Time) { s.ExpireTime("k") }, []string{"expired k"}},
	{"Len", expiredK, func(s feedOps, _ time.Time) { s.Len() }, nil},
	{"Range", setK, func(s feedOps, _ time.Time) { s.Range(func(string) bool { return true }) }, nil},
	{"RangeExpired", expiredK, func(s feedOps, _ time.Time) { s.Range(func(string) bool { return true }) }, []string{"expired k"}},

	// Set and GetSet: "new" before "set" when the key is created, and an
	// expired key is reclaimed first, as Redis's lookup does.
	{"SetAbsent", nil, func(s feedOps, _ time.Time) { s.Set("k", "w") }, []string{"new k", "set k"}},
	{"SetExisting", setKTTL, func(s feedOps, _ time.Time) { s.Set("k", "w") }, []string{"set k"}},
	{"SetExpired", expiredK, func(s feedOps, _ time.Time) { s.Set("k", "w") }, []string{"expired k", "new k", "set k"}},
	{"GetSetAbsent", nil, func(s feedOps, _ time.Time) { s.GetSet("k", "w") }, []string{"new k", "set k"}},
	{"GetSetExisting", setK, func(s feedOps, _ time.Time) { s.GetSet("k", "w") }, []string{"set k"}},
	{"GetSetExpired", expiredK, func(s feedOps, _ time.Time) { s.GetSet("k", "w") }, []string{"expired k", "new k", "set k"}},

	// SetWith: Redis SET with its options.
	{"SetWithAbsent", nil, func(s feedOps, _ time.Time) { s.SetWith("k", "w", engine.SetArgs{}) }, []string{"new k", "set k"}},
	{"SetWithTTL", setK, func(s feedOps, _ time.Time) { s.SetWith("k", "w", engine.SetArgs{TTL: time.Second}) }, []string{"set k", "expire k"}},
	{"SetWithTTLAbsent", nil, func(s feedOps, _ time.Time) { s.SetWith("k", "w", engine.SetArgs{TTL: time.Second}) }, []string{"new k", "set k", "expire k"}},
	{"SetWithAt", nil, func(s feedOps, now time.Time) { s.SetWith("k", "w", engine.SetArgs{At: now.Add(time.Hour)}) }, []string{"new k", "set k", "expire k"}},
	{"SetWithAtPastAbsent", nil, func(s feedOps, now time.Time) { s.SetWith("k", "w", engine.SetArgs{At: now.Add(-time.Hour)}) }, []string{"new k", "set k", "expire k", "expired k"}},
	{"SetWithAtPastHeld", setK, func(s feedOps, now time.Time) { s.SetWith("k", "w", engine.SetArgs{At: now.Add(-time.Hour)}) }, []string{"set k", "expire k", "expired k"}},
	{"SetWithKeepTTL", setKTTL, func(s feedOps, _ time.Time) { s.SetWith("k", "w", engine.SetArgs{KeepTTL: true}) }, []string{"set k"}},
	{"SetWithNXHeld", setK, func(s feedOps, _ time.Time) { s.SetWith("k", "w", engine.SetArgs{Cond: engine.IfAbsent}) }, nil},
	{"SetWithNXExpired", expiredK, func(s feedOps, _ time.Time) { s.SetWith("k", "w", engine.SetArgs{Cond: engine.IfAbsent}) }, []string{"expired k", "new k", "set k"}},
	{"SetWithXXAbsent", nil, func(s feedOps, _ time.Time) { s.SetWith("k", "w", engine.SetArgs{Cond: engine.IfPresent}) }, nil},
	{"SetWithXXExpired", expiredK, func(s feedOps, _ time.Time) { s.SetWith("k", "w", engine.SetArgs{Cond: engine.IfPresent}) }, []string{"expired k"}},
	{"SetWithIfEqual", setK, func(s feedOps, _ time.Time) { s.SetWith("k", "w", engine.SetArgs{Cond: engine.IfEqual, Match: "v"}) }, []string{"set k"}},
	{"SetWithIfEqualFails", setK, func(s feedOps, _ time.Time) { s.SetWith("k", "w", engine.SetArgs{Cond: engine.IfEqual, Match: "x"}) }, nil},
	{"SetWithIfNotEqualFails", setK, func(s feedOps, _ time.Time) { s.SetWith("k", "w", engine.SetArgs{Cond: engine.IfNotEqual, Match: "v"}) }, nil},
	{"SetWithSyntax", setK, func(s feedOps, _ time.Time) { s.SetWith("k", "w", engine.SetArgs{KeepTTL: true, TTL: time.Second}) }, nil},
	{"SetWithInvalidTTL", setK, func(s feedOps, _ time.Time) { s.SetWith("k", "w", engine.SetArgs{TTL: -1}) }, nil},
	{"SetWithOverflow", setK, func(s feedOps, _ time.Time) { s.SetWith("k", "w", engine.SetArgs{TTL: math.MaxInt64}) }, nil},

	// The lock operations.
	{"FencedAbsent", nil, func(s feedOps, _ time.Time) { s.SetNXPXFenced("k", "t", time.Second) }, []string{"new k", "set k", "expire k"}},
	{"FencedHeld", setK, func(s feedOps, _ time.Time) { s.SetNXPXFenced("k", "t", time.Second) }, nil},
	{"FencedExpired", expiredK, func(s feedOps, _ time.Time) { s.SetNXPXFenced("k", "t", time.Second) }, []string{"expired k", "new k", "set k", "expire k"}},
	{"FencedInvalid", nil, func(s feedOps, _ time.Time) { s.SetNXPXFenced("k", "t", 0) }, nil},
	{"CompareAndDelete", setK, func(s feedOps, _ time.Time) { s.CompareAndDelete("k", "v") }, []string{"del k"}},
	{"CompareAndDeleteOther", setK, func(s feedOps, _ time.Time) { s.CompareAndDelete("k", "x") }, nil},
	{"CompareAndDeleteAbsent", nil, func(s feedOps, _ time.Time) { s.CompareAndDelete("k", "v") }, nil},
	{"CompareAndDeleteExpired", expiredK, func(s feedOps, _ time.Time) { s.CompareAndDelete("k", "v") }, []string{"expired k"}},
	{"CompareAndSwap", setKTTL, func(s feedOps, _ time.Time) { s.CompareAndSwap("k", "v", "w") }, []string{"set k"}},
	{"CompareAndSwapOther", setK, func(s feedOps, _ time.Time) { s.CompareAndSwap("k", "x", "w") }, nil},
	{"CompareAndPExpire", setK, func(s feedOps, _ time.Time) { s.CompareAndPExpire("k", "v", time.Second) }, []string{"expire k"}},
	{"CompareAndPExpireOther", setK, func(s feedOps, _ time.Time) { s.CompareAndPExpire("k", "x", time.Second) }, nil},
	{"CompareAndPExpireInvalid", setK, func(s feedOps, _ time.Time) { s.CompareAndPExpire("k", "v", 0) }, nil},

	// Deletes.
	{"GetDel", setK, func(s feedOps, _ time.Time) { s.GetDel("k") }, []string{"del k"}},
	{"GetDelAbsent", nil, func(s feedOps, _ time.Time) { s.GetDel("k") }, nil},
	{"GetDelExpired", expiredK, func(s feedOps, _ time.Time) { s.GetDel("k") }, []string{"expired k"}},
	{"Del", setK, func(s feedOps, _ time.Time) { s.Del("k") }, []string{"del k"}},
	{"DelAbsent", nil, func(s feedOps, _ time.Time) { s.Del("k") }, nil},
	{"DelExpired", expiredK, func(s feedOps, _ time.Time) { s.Del("k") }, []string{"expired k"}},
	{"DelMany", func(e *engine.Engine, _ *clock.Mock) { e.Set("k", "v"); e.Set("a", "v") },
		func(s feedOps, _ time.Time) { s.Del("b", "k", "a", "k") }, []string{"del k", "del a"}},

	// Deadlines.
	{"PExpire", setK, func(s feedOps, _ time.Time) { s.PExpireCond("k", time.Second, engine.ExpireAlways) }, []string{"expire k"}},
	{"PExpireNow", setK, func(s feedOps, _ time.Time) { s.PExpireCond("k", 0, engine.ExpireAlways) }, []string{"del k"}},
	{"PExpireAbsent", nil, func(s feedOps, _ time.Time) { s.PExpireCond("k", time.Second, engine.ExpireAlways) }, nil},
	{"PExpireExpired", expiredK, func(s feedOps, _ time.Time) { s.PExpireCond("k", time.Second, engine.ExpireAlways) }, []string{"expired k"}},
	{"PExpireNXFails", setKTTL, func(s feedOps, _ time.Time) { s.PExpireCond("k", time.Second, engine.ExpireNX) }, nil},
	{"PExpireGT", setKTTL, func(s feedOps, _ time.Time) { s.PExpireCond("k", time.Hour, engine.ExpireGT) }, []string{"expire k"}},
	{"PExpireSyntax", setK, func(s feedOps, _ time.Time) { s.PExpireCond("k", time.Second, 9) }, nil},
	{"PExpireOverflow", setK, func(s feedOps, _ time.Time) { s.PExpireCond("k", math.MaxInt64, engine.ExpireAlways) }, nil},
	{"PExpireAt", setK, func(s feedOps, now time.Time) { s.PExpireAtCond("k", now.Add(time.Hour), engine.ExpireAlways) }, []string{"expire k"}},
	{"PExpireAtPast", setK, func(s feedOps, now time.Time) { s.PExpireAtCond("k", now.Add(-time.Hour), engine.ExpireAlways) }, []string{"del k"}},
	{"PExpireAtXXFails", setK, func(s feedOps, now time.Time) { s.PExpireAtCond("k", now.Add(time.Hour), engine.ExpireXX) }, nil},
	{"PExpireAtLate", setK, func(s feedOps, now time.Time) { s.PExpireAtCond("k", now.AddDate(300, 0, 0), engine.ExpireAlways) }, nil},
	{"Persist", setKTTL, func(s feedOps, _ time.Time) { s.Persist("k") }, []string{"persist k"}},
	{"PersistNoTTL", setK, func(s feedOps, _ time.Time) { s.Persist("k") }, nil},
	{"PersistExpired", expiredK, func(s feedOps, _ time.Time) { s.Persist("k") }, []string{"expired k"}},

	// INCRBY.
	{"IncrByAbsent", nil, func(s feedOps, _ time.Time) { s.IncrBy("k", 1) }, []string{"new k", "incrby k"}},
	{"IncrBy", setKInt, func(s feedOps, _ time.Time) { s.IncrBy("k", 1) }, []string{"incrby k"}},
	{"IncrByExpired", expiredK, func(s feedOps, _ time.Time) { s.IncrBy("k", 1) }, []string{"expired k", "new k", "incrby k"}},
	{"IncrByNotInteger", setK, func(s feedOps, _ time.Time) { s.IncrBy("k", 1) }, nil},
	{"IncrByOverflow", setKInt, func(s feedOps, _ time.Time) { s.IncrBy("k", math.MaxInt64) }, nil},

	// Flush: one event for every key, expired ones included.
	{"Flush", func(e *engine.Engine, clk *clock.Mock) { expiredK(e, clk); e.Set("a", "v"); e.Set("b", "v") },
		func(s feedOps, _ time.Time) { s.Flush() }, []string{"flush "}},
	{"FlushEmpty", nil, func(s feedOps, _ time.Time) { s.Flush() }, []string{"flush "}},
}

// newFeedEngine returns an engine on a mock clock whose reaper is stopped,
// so that only the calls under test reclaim expired keys.
func newFeedEngine(t *testing.T) (*engine.Engine, *clock.Mock) {
	t.Helper()
	clk := clock.NewMock()
	clk.Set(epoch)
	e := engine.New(engine.Options{Clock: clk, Shards: 4})
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return e, clk
}

// listenAfter returns an engine as newFeedEngine does, prepared by setup
// (if any), and a recorder listening from then on.
func listenAfter(t *testing.T, setup func(*engine.Engine, *clock.Mock)) (*engine.Engine, *recorder) {
	t.Helper()
	e, clk := newFeedEngine(t)
	if setup != nil {
		setup(e, clk)
	}
	r := &recorder{}
	t.Cleanup(e.Listen(r.listen))
	return e, r
}

// TestFeedEvents checks that every call of the surface Engine and Tx share
// reports exactly Redis's events, in order: directly, and inside Update.
func TestFeedEvents(t *testing.T) {
	for _, tc := range feedCases {
		for _, via := range []string{"Engine", "Tx"} {
			t.Run(tc.name+"/"+via, func(t *testing.T) {
				e, r := listenAfter(t, tc.setup)
				if via == "Engine" {
					tc.op(e, e.Now())
				} else {
					e.Update(nil, func(tx *engine.Tx) { tc.op(tx, tx.Now()) })
				}
				if got := r.take(); !slices.Equal(got, tc.want) {
					t.Fatalf("events = %q, want %q", got, tc.want)
				}
			})
		}
	}
}

// TestFeedEngineOnly covers the Engine methods Tx does not have, and the
// reclaimers.
func TestFeedEngineOnly(t *testing.T) {
	tests := []feedCase{
		{"SetPX", nil, func(feedOps, time.Time) {}, []string{"new k", "set k", "expire k"}},
		{"SetPXExisting", setK, func(feedOps, time.Time) {}, []string{"set k", "expire k"}},
		{"SetPXInvalid", setK, func(feedOps, time.Time) {}, nil},
		{"SetNX", nil, func(feedOps, time.Time) {}, []string{"new k", "set k"}},
		{"SetNXHeld", setKTTL, func(feedOps, time.Time) {}, nil},
		{"SetNXExpired", expiredK, func(feedOps, time.Time) {}, []string{"expired k", "new k", "set k"}},
		{"SetNXPX", nil, func(feedOps, time.Time) {}, []string{"new k", "set k", "expire k"}},
		{"SetNXPXHeld", setK, func(feedOps, time.Time) {}, nil},
		{"SetNXPXExpired", expiredK, func(feedOps, time.Time) {}, []string{"expired k", "new k", "set k", "expire k"}},
		{"SetNXPXInvalid", nil, func(feedOps, time.Time) {}, nil},
		{"PExpire", setK, func(feedOps, time.Time) {}, []string{"expire k"}},
		{"PExpireAt", setK, func(feedOps, time.Time) {}, []string{"del k"}},
		{"Scan", expiredK, func(feedOps, time.Time) {}, []string{"expired k"}},
		{"Watch", expiredK, func(feedOps, time.Time) {}, []string{"expired k"}},
		{"Reap", func(e *engine.Engine, clk *clock.Mock) { expiredK(e, clk); e.Set("a", "v") }, func(feedOps, time.Time) {}, []string{"expired k"}},
	}
	calls := map[string]func(e *engine.Engine){
		"SetPX":          func(e *engine.Engine) { _ = e.SetPX("k", "w", time.Second) },
		"SetPXExisting":  func(e *engine.Engine) { _ = e.SetPX("k", "w", time.Second) },
		"SetPXInvalid":   func(e *engine.Engine) { _ = e.SetPX("k", "w", 0) },
		"SetNX":          func(e *engine.Engine) { e.SetNX("k", "w") },
		"SetNXHeld":      func(e *engine.Engine) { e.SetNX("k", "w") },
		"SetNXExpired":   func(e *engine.Engine) { e.SetNX("k", "w") },
		"SetNXPX":        func(e *engine.Engine) { _, _ = e.SetNXPX("k", "w", time.Second) },
		"SetNXPXHeld":    func(e *engine.Engine) { _, _ = e.SetNXPX("k", "w", time.Second) },
		"SetNXPXExpired": func(e *engine.Engine) { _, _ = e.SetNXPX("k", "w", time.Second) },
		"SetNXPXInvalid": func(e *engine.Engine) { _, _ = e.SetNXPX("k", "w", -time.Second) },
		"PExpire":        func(e *engine.Engine) { _, _ = e.PExpire("k", time.Second) },
		"PExpireAt":      func(e *engine.Engine) { _, _ = e.PExpireAt("k", e.Now()) },
		"Scan": func(e *engine.Engine) {
			for c := e.Scan(0, func(string) {}); c != 0; c = e.Scan(c, func(string) {}) {
			}
		},
		"Watch": func(e *engine.Engine) { _, stop := e.Watch("k"); stop() },
		"Reap":  func(e *engine.Engine) { e.Reap() },
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, r := listenAfter(t, tc.setup)
			calls[tc.name](e)
			if got := r.take(); !slices.Equal(got, tc.want) {
				t.Fatalf("events = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestFeedPartialFlush: Flush in a section that holds some shards only
// reports each key it deletes, since one flush event would claim every key.
func TestFeedPartialFlush(t *testing.T) {
	e, r := listenAfter(t, func(e *engine.Engine, clk *clock.Mock) {
		expiredK(e, clk)
		e.Set("a", "v")
	})
	e.Update([]string{"k"}, func(tx *engine.Tx) { tx.Flush() })
	got := r.take()
	if !slices.Contains(got, "expired k") || slices.Contains(got, "flush ") {
		t.Fatalf("events = %q, want \"expired k\" and no flush event", got)
	}
	for _, ev := range got {
		if !strings.HasPrefix(ev, "del ") && ev != "expired k" {
			t.Fatalf("events = %q, want only del events besides \"expired k\"", got)
		}
	}
	if _, ok := e.Get("a"); ok != !slices.Contains(got, "del a") {
		t.Fatalf("Get(a) ok = %v with events %q: a key deleted without its event, or reported and kept", ok, got)
	}
}

// TestFeedQuietNotify: a quiet section reports only what it names, in its
// own order, except reclamations of expired keys; watchers still fire.
func TestFeedQuietNotify(t *testing.T) {
	e, r := listenAfter(t, func(e *engine.Engine, clk *clock.Mock) {
		expiredK(e, clk)
		e.Set("src", "v")
	})
	watched, stopWatch := e.Watch("src")
	defer stopWatch()
	// RENAME src dst, as a server composes it: Redis reports the
	// destination's creation, then rename_from, then rename_to.
	e.Update([]string{"src", "dst", "k"}, func(tx *engine.Tx) {
		if was := tx.Quiet(true); was {
			t.Error("Quiet(true) = true, want false: a section starts not quiet")
		}
		tx.Get("k") // expired: reported even while quiet
		v, _ := tx.Get("src")
		tx.Del("src")
		tx.Set("dst", v)
		if was := tx.Quiet(false); !was {
			t.Error("Quiet(false) = false, want true")
		}
		tx.Notify("dst", engine.KindNew)
		tx.Notify("src", engine.KindRenameFrom)
		tx.Notify("dst", engine.KindRenameTo)
		tx.Set("dst", "w") // not quiet again: reported
	})
	want := []string{"expired k", "new dst", "rename_from src", "rename_to dst", "set dst"}
	if got := r.take(); !slices.Equal(got, want) {
		t.Fatalf("events = %q, want %q", got, want)
	}
	select {
	case <-watched:
	default:
		t.Fatal("Watch(src) pending after a quiet Del of src, want fired")
	}
	// The idiom restores the setting when the function returns.
	e.Update(nil, func(tx *engine.Tx) {
		func() {
			defer tx.Quiet(tx.Quiet(true))
			tx.Set("a", "1")
		}()
		tx.Set("b", "1")
	})
	if got, want := r.take(), []string{"new b", "set b"}; !slices.Equal(got, want) {
		t.Fatalf("events = %q, want %q", got, want)
	}
}

// TestFeedNotifyOutsideSection: Notify, like every Tx method, panics for a
// key the section does not hold.
func TestFeedNotifyOutsideSection(t *testing.T) {
	e, _ := newFeedEngine(t)
	var keys []string
	for i := range 64 { // enough keys that some fall outside k's shard
		keys = append(keys, fmt.Sprint("other-", i))
	}
	panicked := 0
	for _, other := range keys {
		func() {
			defer func() {
				if recover() != nil {
					panicked++
				}
			}()
			e.Update([]string{"k"}, func(tx *engine.Tx) { tx.Notify(other, engine.KindSet) })
		}()
	}
	if panicked == 0 {
		t.Fatal("Notify of keys outside the section never panicked")
	}
}

// TestFeedListenStop: listeners receive events in order of registration
// from Listen to stop and never after; stop is idempotent.
func TestFeedListenStop(t *testing.T) {
	e, _ := newFeedEngine(t)
	var order []string
	var mu sync.Mutex
	mark := func(name string) func(engine.Event) {
		return func(ev engine.Event) {
			mu.Lock()
			order = append(order, name+":"+string(ev.Kind)+" "+ev.Key)
			mu.Unlock()
		}
	}
	e.Set("before", "v")
	stop1 := e.Listen(mark("one"))
	stop2 := e.Listen(mark("two"))
	e.Set("k", "v")
	stop1()
	stop1()
	e.Del("k")
	stop2()
	e.Set("after", "v")
	want := []string{"one:new k", "two:new k", "one:set k", "two:set k", "two:del k"}
	if !slices.Equal(order, want) {
		t.Fatalf("events = %q, want %q", order, want)
	}
}

// inBubble runs fn in a synctest bubble with an engine on the real (there:
// virtual) clock and a recorder listening to it.
func inBubble(t *testing.T, fn func(t *testing.T, e *engine.Engine, r *recorder)) {
	synctest.Test(t, func(t *testing.T) {
		e := engine.New(engine.Options{})
		defer e.Close()
		var r recorder
		defer e.Listen(r.listen)()
		fn(t, e, &r)
	})
}

// TestFeedSetOverExpiredRealClock: with the real clock, Set reads the time
// for listeners only when it overwrites a key with a deadline.
func TestFeedSetOverExpiredRealClock(t *testing.T) {
	inBubble(t, func(t *testing.T, e *engine.Engine, r *recorder) {
		_ = e.SetPX("k", "v", time.Second)
		e.Set("k", "w")
		_ = e.SetPX("k", "v", time.Second)
		// Stop the reaper from reclaiming first: Set must find it.
		e.Close()
		time.Sleep(2 * time.Second)
		e.Set("k", "x")
		want := []string{"new k", "set k", "expire k", "set k", "set k", "expire k", "expired k", "new k", "set k"}
		if got := r.take(); !slices.Equal(got, want) {
			t.Fatalf("events = %q, want %q", got, want)
		}
	})
}

// TestFeedReaper: the background reaper reports each key it reclaims.
func TestFeedReaper(t *testing.T) {
	inBubble(t, func(t *testing.T, e *engine.Engine, r *recorder) {
		start := time.Now()
		_ = e.SetPX("a", "v", time.Second)
		_ = e.SetPX("b", "v", 2*time.Second)
		r.take()
		for i, k := range []string{"a", "b"} {
			time.Sleep(time.Until(start.Add(time.Duration(i+1) * time.Second))) // virtual: to k's deadline
			synctest.Wait()
			if got := r.take(); len(got) != 0 {
				t.Fatalf("events at %s's deadline = %q, want none: the key is alive", k, got)
			}
			time.Sleep(5 * time.Millisecond)
			synctest.Wait() // the reaper has run
			if got, want := r.take(), []string{"expired " + k}; !slices.Equal(got, want) {
				t.Fatalf("events after %s's deadline = %q, want %q", k, got, want)
			}
		}
	})
}

// TestFeedConcurrent runs writers on every shard while listeners come and
// go: under -race this checks that delivery and registration are
// synchronized, and that a listener counts exactly the changes made while
// it was registered.
func TestFeedConcurrent(t *testing.T) {
	e := engine.New(engine.Options{Shards: 4})
	defer e.Close()
	var total atomic.Int64
	stop := e.Listen(func(engine.Event) { total.Add(1) })
	var wg sync.WaitGroup
	const writers, rounds = 4, 500
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				k := fmt.Sprint("w", w, "-", i%8)
				e.Set(k, "v")   // new+set, or set
				e.Del(k)        // del
				e.SetNX(k, "v") // new+set
				e.Del(k)        // del
			}
		}()
	}
	wg.Add(1)
	go func() { // listeners registered and removed while writers run
		defer wg.Done()
		for range 50 {
			s := e.Listen(func(engine.Event) {})
			s()
		}
	}()
	wg.Wait()
	stop()
	e.Set("late", "v")
	// Each round: Set on an absent key (new, set), Del, SetNX (new, set),
	// Del: six events.
	if got, want := total.Load(), int64(writers*rounds*6); got != want {
		t.Fatalf("listener saw %d events, want %d", got, want)
	}
}

// TestFeedTag: a tagged section's events carry its tag, Notify's and
// Flush's included, and so does a key it finds expired; changes made
// outside a section, before SetTag, or by Reap carry none.
func TestFeedTag(t *testing.T) {
	e, r := listenAfter(t, func(e *engine.Engine, clk *clock.Mock) {
		expiredK(e, clk)
		e.Set("a", "v")
	})
	tagged := func() []string {
		var s []string
		for _, ev := range r.takeEvents() {
			s = append(s, fmt.Sprintf("%s %s %v", ev.Kind, ev.Key, ev.Tag))
		}
		return s
	}
	e.Set("b", "v")
	e.Update([]string{"a", "k", "c"}, func(tx *engine.Tx) {
		tx.Set("c", "v") // before SetTag
		tx.SetTag("client-7")
		tx.Exists("k") // found expired
		tx.Del("a")
		defer tx.Quiet(tx.Quiet(true))
		tx.Set("c", "w")
		tx.Notify("c", engine.KindAppend)
	})
	want := []string{"new b <nil>", "set b <nil>", "new c <nil>", "set c <nil>",
		"expired k client-7", "del a client-7", "append c client-7"}
	if got := tagged(); !slices.Equal(got, want) {
		t.Fatalf("events = %q, want %q", got, want)
	}
	e.Update(nil, func(tx *engine.Tx) {
		tx.SetTag(42)
		tx.Flush()
	})
	if got, want := tagged(), []string{"flush  42"}; !slices.Equal(got, want) {
		t.Fatalf("events = %q, want %q", got, want)
	}
}
