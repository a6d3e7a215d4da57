package engine_test

import (
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nxkv/nxkv/engine"
)

// box is an Object for the tests: a string slice of a named type.
type box struct {
	typ   string
	items []string
}

func (b *box) Type() string { return b.typ }

// setObject stores a box of type typ under key in a section.
func setObject(e *engine.Engine, key, typ string) *box {
	b := &box{typ: typ}
	e.Update([]string{key}, func(tx *engine.Tx) { tx.SetObject(key, b, "hset") })
	return b
}

// object returns what Tx.Object reports for key.
func object(e *engine.Engine, key string) (obj engine.Object, found bool) {
	e.Update([]string{key}, func(tx *engine.Tx) { obj, found = tx.Object(key) })
	return obj, found
}

func verify(t *testing.T, e *engine.Engine) {
	t.Helper()
	if err := e.Verify(); err != nil {
		t.Fatal(err)
	}
}

// TestObjectLifecycle: an object lives as long as its key's entry holds it,
// and is dropped whenever the entry is overwritten, deleted, expired
// (lazily or by the reaper) or flushed; Verify checks the map and the
// entries agree after each step.
func TestObjectLifecycle(t *testing.T) {
	e, clk := newFeedEngine(t)
	b := setObject(e, "h", "hash")
	if obj, ok := object(e, "h"); !ok || obj != b {
		t.Fatalf("Object = %v, %v, want the box", obj, ok)
	}
	if got := e.Type("h"); got != "hash" {
		t.Fatalf("Type = %q, want hash", got)
	}
	noErr(t, e.Set("s", "v"))
	if obj, ok := object(e, "s"); !ok || obj != nil {
		t.Fatalf("Object of a string = %v, %v, want nil, true", obj, ok)
	}
	if obj, ok := object(e, "none"); ok || obj != nil {
		t.Fatalf("Object of a missing key = %v, %v", obj, ok)
	}
	if got, want := []string{e.Type("s"), e.Type("none")}, []string{engine.TypeString, engine.TypeNone}; !slices.Equal(got, want) {
		t.Fatalf("Type = %q, want %q", got, want)
	}
	verify(t, e)

	// Overwritten by a string.
	noErr(t, e.Set("h", "now a string"))
	wantString(t, e, "h", "now a string")
	verify(t, e)
	// Replaced by another object, then deleted.
	setObject(e, "h", "list")
	b2 := setObject(e, "h", "set")
	if obj, _ := object(e, "h"); obj != b2 {
		t.Fatal("SetObject did not replace the object")
	}
	if n := e.Del("h"); n != 1 {
		t.Fatalf("Del = %d", n)
	}
	verify(t, e)
	// Expired lazily, then by Reap.
	for _, reap := range []bool{false, true} {
		setObject(e, "x", "zset")
		if ok, err := e.PExpire("x", time.Second); !ok || err != nil {
			t.Fatalf("PExpire = %v, %v", ok, err)
		}
		if d, ok := e.PTTL("x"); !ok || d != time.Second {
			t.Fatalf("PTTL of an object = %v, %v", d, ok)
		}
		clk.Add(2 * time.Second)
		if reap {
			if n := e.Reap(); n != 1 {
				t.Fatalf("Reap = %d", n)
			}
		} else if _, ok := object(e, "x"); ok {
			t.Fatal("an expired object is found")
		}
		if e.Len() != 1 { // "s" remains
			t.Fatalf("Len = %d after expiry", e.Len())
		}
		verify(t, e)
	}
	// SetObject clears a TTL, as Redis's stores do.
	noErr(t, e.SetPX("y", "v", time.Minute))
	setObject(e, "y", "hash")
	if d, ok := e.PTTL("y"); !ok || d != engine.NoExpiry {
		t.Fatalf("PTTL after SetObject = %v, %v", d, ok)
	}
	e.Flush()
	if e.Len() != 0 {
		t.Fatal("Flush left keys")
	}
	verify(t, e)
}

// TestObjectCompaction: a shard that shrinks renumbers its entries; the
// objects, kept by key, stay with their keys.
func TestObjectCompaction(t *testing.T) {
	e, _ := newFeedEngine(t)
	boxes := map[string]*box{}
	for i := range 5000 {
		k := "k" + strconv.Itoa(i)
		if i%10 == 0 {
			boxes[k] = setObject(e, k, "hash")
		} else {
			noErr(t, e.Set(k, "v"))
		}
	}
	for i := range 5000 {
		if i%10 != 0 || i%20 == 0 {
			e.Del("k" + strconv.Itoa(i))
		}
	}
	verify(t, e)
	for k, b := range boxes {
		obj, ok := object(e, k)
		if n, _ := strconv.Atoi(k[1:]); n%20 == 0 {
			if ok {
				t.Fatalf("%s deleted but found", k)
			}
			continue
		}
		if obj != b {
			t.Fatalf("%s: object %v after compaction, want its box", k, obj)
		}
	}
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantString(t *testing.T, e *engine.Engine, key, want string) {
	t.Helper()
	if v, ok := e.Get(key); !ok || v != want {
		t.Fatalf("Get(%q) = %q, %v, want %q", key, v, ok, want)
	}
}

// TestStringOpsOnObject: every string operation on a key that holds an
// object gives ErrWrongType where it returns an error, and otherwise the
// documented answer: never the marker, never a match against it (not even
// for a caller's string with the marker's bytes).
func TestStringOpsOnObject(t *testing.T) {
	m := engine.Marker()
	for _, tc := range []struct {
		name string
		op   func(e *engine.Engine) any
		want any
		kept bool // the object is still there afterwards
	}{
		{"Get", func(e *engine.Engine) any { v, ok := e.Get("h"); return [2]any{v, ok} }, [2]any{"", false}, true},
		{"GetPTTL", func(e *engine.Engine) any { v, _, ok := e.GetPTTL("h"); return [2]any{v, ok} }, [2]any{"", false}, true},
		{"PTTL", func(e *engine.Engine) any { d, ok := e.PTTL("h"); return [2]any{d, ok} }, [2]any{engine.NoExpiry, true}, true},
		{"Exists", func(e *engine.Engine) any { return e.Exists("h") }, true, true},
		{"SetNX", func(e *engine.Engine) any { ok, err := e.SetNX("h", m); return [2]any{ok, err} }, [2]any{false, nil}, true},
		{"SetNXPX", func(e *engine.Engine) any { ok, err := e.SetNXPX("h", m, time.Second); return [2]any{ok, err} }, [2]any{false, nil}, true},
		{"IncrBy", func(e *engine.Engine) any { _, err := e.IncrBy("h", 1); return err }, engine.ErrWrongType, true},
		{"SetWithIfEqual", func(e *engine.Engine) any {
			_, err := e.SetWith("h", "v", engine.SetArgs{Cond: engine.IfEqual, Match: m})
			return err
		}, engine.ErrWrongType, true},
		{"SetWithIfNotEqual", func(e *engine.Engine) any {
			_, err := e.SetWith("h", "v", engine.SetArgs{Cond: engine.IfNotEqual, Match: "x"})
			return err
		}, engine.ErrWrongType, true},
		{"SetWithNX", func(e *engine.Engine) any {
			r, err := e.SetWith("h", "v", engine.SetArgs{Cond: engine.IfAbsent})
			return [2]any{r, err}
		}, [2]any{engine.SetResult{}, nil}, true},
		{"SetWithXX", func(e *engine.Engine) any {
			r, err := e.SetWith("h", "v", engine.SetArgs{Cond: engine.IfPresent})
			return [2]any{r, err}
		}, [2]any{engine.SetResult{Written: true}, nil}, false},
		{"CompareAndDelete", func(e *engine.Engine) any { return e.CompareAndDelete("h", m) }, false, true},
		{"CompareAndSwap", func(e *engine.Engine) any { ok, err := e.CompareAndSwap("h", m, "v"); return [2]any{ok, err} }, [2]any{false, nil}, true},
		{"CompareAndPExpire", func(e *engine.Engine) any {
			ok, err := e.CompareAndPExpire("h", m, time.Second)
			return [2]any{ok, err}
		}, [2]any{false, nil}, true},
		{"GetDel", func(e *engine.Engine) any { v, ok := e.GetDel("h"); return [2]any{v, ok} }, [2]any{"", false}, true},
		{"GetSet", func(e *engine.Engine) any { v, ok, err := e.GetSet("h", "v"); return [3]any{v, ok, err} }, [3]any{"", false, nil}, false},
		{"Set", func(e *engine.Engine) any { return [1]any{e.Set("h", "v")} }, [1]any{nil}, false},
		{"Del", func(e *engine.Engine) any { return e.Del("h") }, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := newFeedEngine(t)
			b := setObject(e, "h", "hash")
			got := tc.op(e)
			if err, ok := got.(error); ok {
				if !errors.Is(err, tc.want.(error)) {
					t.Fatalf("got %v, want %v", err, tc.want)
				}
			} else if got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			obj, _ := object(e, "h")
			if kept := obj == engine.Object(b); kept != tc.kept {
				t.Fatalf("object kept = %v, want %v", kept, tc.kept)
			}
			verify(t, e)
		})
	}
}

// TestObjectEvents: SetObject reports "new" for a key it creates and then
// the caller's kind; Notify names in-place changes; a watcher of the key
// wakes on both.
func TestObjectEvents(t *testing.T) {
	e, r := listenAfter(t, nil)
	ch, stop := e.Watch("h")
	defer stop()
	b := setObject(e, "h", "hash")
	select {
	case <-ch:
	default:
		t.Fatal("SetObject did not wake the watcher")
	}
	ch2, stop2 := e.Watch("h")
	defer stop2()
	e.Update([]string{"h"}, func(tx *engine.Tx) {
		obj, _ := tx.Object("h")
		obj.(*box).items = append(obj.(*box).items, "f")
		tx.Notify("h", "hset")
	})
	select {
	case <-ch2:
	default:
		t.Fatal("Notify did not wake the watcher")
	}
	setObject(e, "h", "hash") // replaces: no "new"
	e.Del("h")
	if got, want := r.take(), []string{"new h", "hset h", "hset h", "hset h", "del h"}; !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	_ = b
}

// TestVerifyCatchesLostObject: the invariant check catches an entry left
// holding the marker without its object.
func TestVerifyCatchesLostObject(t *testing.T) {
	e, _ := newFeedEngine(t)
	setObject(e, "h", "hash")
	verify(t, e)
	engine.ForgetObject(e, "h")
	if err := e.Verify(); err == nil {
		t.Fatal("Verify passed with an object lost")
	}
}

// sizedBox is a box that estimates its bytes (engine.Sizer): 100 an item.
type sizedBox struct{ box }

func (b *sizedBox) Size() int64 { return 100 * int64(len(b.items)) }

// TestObjectSizeCharged: under a bound, a key holding a Sizer counts its
// entry, its marker (24 bytes) and the Size it gave when stored and at each
// Notify; the charge is given back when the key is deleted, overwritten or
// evicted, and Verify agrees at every step. A growing object takes the
// engine to its bound: a write is then refused (NoEviction) or the object
// evicted (allkeys-lru).
func TestObjectSizeCharged(t *testing.T) {
	e, _ := newBounded(t, engine.Options{MaxMemory: 1 << 20, Policy: engine.NoEviction})
	used := func() int64 { t.Helper(); verify(t, e); return e.MemoryStats().Used }
	entry := cost("h", engine.Marker(), false)
	b := &sizedBox{box{typ: "hash", items: []string{"a", "b"}}}
	e.Update([]string{"h"}, func(tx *engine.Tx) { tx.SetObject("h", b, "hset") })
	if got, want := used(), entry+200; got != want {
		t.Fatalf("Used after SetObject = %d, want %d", got, want)
	}
	e.Update([]string{"h"}, func(tx *engine.Tx) {
		b.items = append(b.items, "c", "d", "e")
		tx.Notify("h", "hset")
	})
	if got, want := used(), entry+500; got != want {
		t.Fatalf("Used after a change = %d, want %d", got, want)
	}
	noErr(t, e.Set("h", "v")) // overwrite: the charge goes with the object
	if got, want := used(), cost("h", "v", false); got != want {
		t.Fatalf("Used after overwrite = %d, want %d", got, want)
	}
	e.Update([]string{"h"}, func(tx *engine.Tx) { tx.SetObject("h", b, "hset") })
	e.Del("h")
	if got := used(); got != 0 {
		t.Fatalf("Used after Del = %d, want 0", got)
	}

	// Grow an object past a bound of 64 KiB, 100 items (10,000 bytes) a
	// section.
	for _, policy := range []engine.Policy{engine.NoEviction, engine.AllKeysLRU} {
		e, _ := newBounded(t, engine.Options{MaxMemory: 64 << 10, Policy: policy})
		g := &sizedBox{box{typ: "list"}}
		e.Update([]string{"g"}, func(tx *engine.Tx) { tx.SetObject("g", g, "rpush") })
		for range 7 {
			e.Update([]string{"g"}, func(tx *engine.Tx) {
				for range 100 {
					g.items = append(g.items, "x")
				}
				tx.Notify("g", "rpush")
			})
		}
		err := e.Set("s", "v")
		switch policy {
		case engine.NoEviction:
			if !errors.Is(err, engine.ErrOOM) {
				t.Fatalf("noeviction: Set past the bound = %v, want ErrOOM", err)
			}
		default:
			noErr(t, err)
			if e.Type("g") != engine.TypeNone {
				t.Fatal("allkeys-lru: the object past the bound was not evicted")
			}
			if st := e.MemoryStats(); st.Used > st.Max {
				t.Fatalf("allkeys-lru: Used %d over the bound %d after eviction", st.Used, st.Max)
			}
		}
		verify(t, e)
	}
}
