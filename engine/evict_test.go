package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/nxkv/nxkv/engine"
)

// newBounded returns an engine on a mock clock at epoch with a memory bound,
// closed with the test.
func newBounded(t testing.TB, opts engine.Options) (*engine.Engine, *clock.Mock) {
	t.Helper()
	clk := clock.NewMock()
	clk.Set(epoch)
	opts.Clock = clk
	e := engine.New(opts)
	t.Cleanup(func() { e.Close() })
	return e, clk
}

// cost is what the engine counts for a key (see "Memory bound").
func cost(key, value string, ttl bool) int64 {
	c := 64 + int64(len(key)+7)&^7 + int64(len(value)+7)&^7
	if ttl {
		c += 16
	}
	return c
}

// TestMemoryCount: the count is the documented cost of the keys held, kept
// by every kind of write and delete, and reported without a bound too.
func TestMemoryCount(t *testing.T) {
	for _, max := range []int64{0, 1 << 30} {
		t.Run("max="+strconv.FormatInt(max, 10), func(t *testing.T) {
			e, clk := newBounded(t, engine.Options{MaxMemory: max, Policy: engine.AllKeysLRU})
			e.Set("a", "1")                             // 64+8+8
			e.SetPX("bb", "value-of-9", time.Second)    // 64+8+16+16
			e.IncrBy(engine.ReservedPrefix+"n", 12345)  // 64+8+8
			e.SetNXPXFenced("lock", "tok", time.Minute) // 64+8+8+16
			e.GetSet("a", "longer than eight")          // value 24
			e.Persist("bb")                             // no link
			e.PExpire("a", time.Hour)                   // a link
			want := cost("a", "longer than eight", true) + cost("bb", "value-of-9", false) +
				cost(engine.ReservedPrefix+"n", "12345", false) + cost("lock", "tok", true)
			if got := e.MemoryStats().Used; got != want {
				t.Fatalf("Used = %d, want %d", got, want)
			}
			clk.Add(time.Minute + time.Millisecond) // the lock expires
			e.Reap()
			e.Del("bb")
			want -= cost("lock", "tok", true) + cost("bb", "value-of-9", false)
			if got := e.MemoryStats().Used; got != want {
				t.Fatalf("Used after expiry and delete = %d, want %d", got, want)
			}
			e.FlushAll()
			if st := e.MemoryStats(); st.Used != 0 || st.Max != max {
				t.Fatalf("after FlushAll: %+v, want Used 0, Max %d", st, max)
			}
			if err := e.Verify(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestNoEviction: under NoEviction a full engine refuses every write that
// may add memory with ErrOOM and changes nothing, serves reads and
// deletes, and takes writes again once keys are deleted.
func TestNoEviction(t *testing.T) {
	const max = 4096
	e, _ := newBounded(t, engine.Options{MaxMemory: max, Shards: 4})
	n := 0
	for ; ; n++ {
		err := e.Set("k"+strconv.Itoa(n), "value")
		if errors.Is(err, engine.ErrOOM) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	st := e.MemoryStats()
	if st.Used <= max || st.Used > max+cost("k"+strconv.Itoa(n-1), "value", false) {
		t.Fatalf("Used = %d at the first refusal, want over %d by at most the last write", st.Used, max)
	}
	lk, _, _ := e.SetNXPXFenced("never", "t", time.Minute)
	refused := map[string]error{
		"Set":           e.Set("k0", "v"),
		"SetPX":         e.SetPX("new", "v", time.Minute),
		"SetNXPXFenced": func() error { _, _, err := e.SetNXPXFenced("lock", "t", time.Minute); return err }(),
		"SetNXPX":       func() error { _, err := e.SetNXPX("new", "v", time.Minute); return err }(),
		"SetNX absent":  func() error { _, err := e.SetNX("new", "v"); return err }(),
		"SetNX present": func() error { _, err := e.SetNX("k0", "v"); return err }(),
		"SetWith":       func() error { _, err := e.SetWith("new", "v", engine.SetArgs{}); return err }(),
		"GetSet":        func() error { _, _, err := e.GetSet("k0", "v"); return err }(),
		"IncrBy":        func() error { _, err := e.IncrBy("n", 1); return err }(),
		"CompareAndSwap": func() error {
			_, err := e.CompareAndSwap("k0", "value", "v")
			return err
		}(),
		"GetOrLoad": func() error {
			_, err := e.GetOrLoad(context.Background(), "new", 0, func(context.Context, string) (string, error) { return "v", nil })
			return err
		}(),
		"Update": func() (err error) {
			e.Update([]string{"k0", "new"}, func(tx *engine.Tx) {
				if _, ok := tx.Get("k0"); !ok {
					err = errors.New("a read in a refused section failed")
					return
				}
				err = tx.Set("new", "v")
			})
			return err
		}(),
	}
	for name, err := range refused {
		if !errors.Is(err, engine.ErrOOM) {
			t.Errorf("%s on a full engine = %v, want ErrOOM", name, err)
		}
	}
	if lk != 0 || e.Exists("new") || e.Exists("lock") || e.Exists("n") || e.MemoryStats().Used != st.Used {
		t.Fatal("a refused write changed the engine")
	}
	if v, ok := e.Get("k0"); v != "value" || !ok {
		t.Fatalf("Get on a full engine = %q, %v", v, ok)
	}
	if e.Del("k0", "k1") != 2 || !e.CompareAndDelete("k2", "value") {
		t.Fatal("deletes on a full engine failed")
	}
	if err := e.Set("k0", "value"); err != nil {
		t.Fatalf("Set after deletes = %v, want nil", err)
	}
	if st := e.MemoryStats(); st.Evicted != 0 {
		t.Fatalf("NoEviction evicted %d keys", st.Evicted)
	}
	if err := e.Verify(); err != nil {
		t.Fatal(err)
	}
}

// TestEvictionPolicies writes ten times the bound under each evicting
// policy: every write succeeds while the policy has keys to evict, the
// engine never holds more than the bound by more than the last write, the
// keys evicted are the policy's to evict (never a held lock nor a reserved
// key, and under a volatile policy never a key without a TTL), each
// eviction fires the key's watchers and is reported to listeners as
// KindEvicted, and a volatile policy with no key left to evict refuses
// with ErrOOM.
func TestEvictionPolicies(t *testing.T) {
	const max = 8 << 10
	for p := engine.AllKeysLRU; p <= engine.VolatileRandom; p++ {
		t.Run(p.String(), func(t *testing.T) {
			e, _ := newBounded(t, engine.Options{MaxMemory: max, Policy: p, Shards: 4})
			var reported atomic.Int64 // KindEvicted events
			defer e.Listen(func(ev engine.Event) {
				if ev.Kind == engine.KindEvicted {
					reported.Add(1)
				}
			})()
			volatile := p == engine.VolatileLRU || p == engine.VolatileLFU || p == engine.VolatileTTL || p == engine.VolatileRandom
			if _, ok, _ := e.SetNXPXFenced("lock", "t", time.Hour); !ok {
				t.Fatal("lock not taken")
			}
			e.IncrBy(engine.ReservedPrefix+"sem:{x}pool#f", 1)
			e.SetPX(engine.ReservedPrefix+"sem:{x}pool#0", "lease", time.Hour)
			var plain []string
			for i := range 10 {
				k := "plain:" + strconv.Itoa(i)
				e.Set(k, "no ttl")
				plain = append(plain, k)
			}
			type watch struct {
				ch   <-chan struct{}
				stop func()
			}
			watches := map[string]watch{}
			for i := 0; i < int(10*max/cost("ttl:0000", "0123456789", true)); i++ {
				k := fmt.Sprintf("ttl:%04d", i)
				if err := e.SetPX(k, "0123456789", time.Duration(i+1)*time.Minute); err != nil {
					t.Fatalf("write %d: %v", i, err)
				}
				if u := e.MemoryStats().Used; u > max+cost(k, "0123456789", true) {
					t.Fatalf("write %d: Used = %d, over %d by more than one write", i, u, max)
				}
				ch, stop := e.Watch(k)
				watches[k] = watch{ch, stop}
			}
			evicted := 0
			for k, w := range watches {
				if !e.Exists(k) {
					evicted++
					select {
					case <-w.ch:
					default:
						t.Errorf("%s evicted without its watch firing", k)
					}
				}
				w.stop()
			}
			st := e.MemoryStats()
			if evicted == 0 || st.Evicted < int64(evicted) || reported.Load() != st.Evicted {
				t.Fatalf("%d watched keys gone, %d evicted counted, %d reported to listeners", evicted, st.Evicted, reported.Load())
			}
			for _, k := range []string{"lock", engine.ReservedPrefix + "sem:{x}pool#f", engine.ReservedPrefix + "sem:{x}pool#0"} {
				if !e.Exists(k) {
					t.Fatalf("%s was evicted", k)
				}
			}
			if volatile {
				for _, k := range plain {
					if !e.Exists(k) {
						t.Fatalf("%s, without a TTL, was evicted under %s", k, p)
					}
				}
				// Only keys without a TTL left to evict: refused.
				e.Update(nil, func(tx *engine.Tx) {
					tx.RangeAll(func(k string) bool {
						if d, ok := tx.PTTL(k); ok && d != engine.NoExpiry && k[0] == 't' {
							tx.Del(k)
						}
						return true
					})
				})
				for i := 0; ; i++ {
					err := e.Set("fill:"+strconv.Itoa(i), "0123456789")
					if errors.Is(err, engine.ErrOOM) {
						break
					}
					if err != nil || i > max {
						t.Fatalf("fill %d: %v, want ErrOOM once full of keys %s may not evict", i, err, p)
					}
				}
			}
			if err := e.Verify(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestEvictionChoice: with one shard and samples enough to see every key,
// each policy evicts exactly the key its definition names.
func TestEvictionChoice(t *testing.T) {
	fill := func(t *testing.T, p engine.Policy) (*engine.Engine, []string) {
		e, _ := newBounded(t, engine.Options{MaxMemory: 10*cost("k0", "v", true) - 1, Policy: p, Shards: 1, Samples: 64})
		var keys []string
		for i := range 10 {
			k := "k" + strconv.Itoa(i)
			// Deadlines decrease, so the newest key expires first.
			if err := e.SetPX(k, "v", time.Duration(20-i)*time.Minute); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, k)
		}
		return e, keys
	}
	t.Run("lru", func(t *testing.T) {
		e, keys := fill(t, engine.AllKeysLRU)
		e.Get("k0") // k0 becomes the most recently used; k1 the least
		e.SetPX("new", "v", time.Hour)
		if e.Exists("k1") || !e.Exists("k0") {
			t.Fatalf("allkeys-lru evicted %v, want k1 only", gone(e, keys))
		}
	})
	t.Run("lfu", func(t *testing.T) {
		e, keys := fill(t, engine.AllKeysLFU)
		for _, k := range keys {
			if k != "k7" {
				e.Get(k) // every key used once more than k7
			}
		}
		e.SetPX("new", "v", time.Hour)
		if g := gone(e, keys); len(g) != 1 || g[0] != "k7" {
			t.Fatalf("allkeys-lfu evicted %v, want k7", g)
		}
	})
	t.Run("ttl", func(t *testing.T) {
		e, keys := fill(t, engine.VolatileTTL)
		e.SetPX("new", "v", time.Hour)
		if g := gone(e, keys); len(g) != 1 || g[0] != "k9" {
			t.Fatalf("volatile-ttl evicted %v, want k9, the nearest deadline", g)
		}
	})
}

// gone returns the keys of keys absent from e.
func gone(e *engine.Engine, keys []string) []string {
	var out []string
	for _, k := range keys {
		if !e.Exists(k) {
			out = append(out, k)
		}
	}
	return out
}

// TestHold: Held reports a lock's mark and Hold sets it, so a key marked
// by Hold survives eviction as a lock SetNXPXFenced wrote does; an
// overwrite clears it. Without a bound nothing is marked.
func TestHold(t *testing.T) {
	e, _ := newBounded(t, engine.Options{MaxMemory: 16 << 10, Policy: engine.AllKeysLRU})
	held := func(key string) (h bool) {
		e.Update([]string{key}, func(tx *engine.Tx) { h = tx.Held(key) })
		return h
	}
	hold := func(key string) (ok bool) {
		e.UpdateAdmitted([]string{key}, func(tx *engine.Tx) { ok = tx.Hold(key) })
		return ok
	}
	if _, ok, err := e.SetNXPXFenced("lock", "t", time.Hour); !ok || err != nil {
		t.Fatal(ok, err)
	}
	noErr(t, e.Set("moved", "t"))
	if !held("lock") || held("moved") || held("absent") {
		t.Fatalf("Held: lock %v, moved %v, absent %v; want true, false, false", held("lock"), held("moved"), held("absent"))
	}
	if !hold("moved") || hold("absent") || !held("moved") || e.Exists("absent") {
		t.Fatal("Hold did not mark an existing key, or marked an absent one")
	}
	for i := range 2000 {
		noErr(t, e.Set("cache"+strconv.Itoa(i), "0123456789012345678901234567890123456789"))
	}
	if !e.Exists("lock") || !e.Exists("moved") || e.MemoryStats().Evicted == 0 {
		t.Fatalf("under eviction: lock %v, held key %v, evicted %d", e.Exists("lock"), e.Exists("moved"), e.MemoryStats().Evicted)
	}
	noErr(t, e.Set("moved", "plain"))
	if held("moved") {
		t.Fatal("an overwritten key is still held")
	}
	u, _ := newBounded(t, engine.Options{})
	noErr(t, u.Set("k", "v"))
	u.Update([]string{"k"}, func(tx *engine.Tx) {
		if !tx.Hold("k") || tx.Held("k") {
			t.Fatal("without a bound: Hold must report the key and Held nothing")
		}
	})
}

// TestDeadlineSettersEvict: setting a deadline adds its link (16 bytes);
// at the bound, PExpire, PExpireAt and CompareAndPExpire evict first as a
// write does, so the count stays within one key and one link of the bound (it
// grew 16 bytes a call, without bound); under NoEviction they are never
// refused, as Redis runs EXPIRE whatever the memory.
func TestDeadlineSettersEvict(t *testing.T) {
	for _, policy := range []engine.Policy{engine.AllKeysLRU, engine.NoEviction} {
		e, _ := newBounded(t, engine.Options{MaxMemory: 64 << 10, Policy: policy})
		n := 0
		for ; ; n++ {
			if err := e.Set("k"+strconv.Itoa(n), "v"); err != nil || e.MemoryStats().Evicted > 0 {
				break
			}
		}
		for i := range n {
			k := "k" + strconv.Itoa(i)
			var err error
			switch i % 3 {
			case 0:
				_, err = e.PExpire(k, time.Hour)
			case 1:
				_, err = e.PExpireAt(k, epoch.Add(time.Hour))
			default:
				_, err = e.CompareAndPExpire(k, "v", time.Hour)
			}
			noErr(t, err)
			if st := e.MemoryStats(); policy != engine.NoEviction && st.Used > st.Max+80+16 {
				t.Fatalf("%v: after %d deadlines set at the bound: Used %d, bound %d", policy, i+1, st.Used, st.Max)
			}
		}
		if st := e.MemoryStats(); policy == engine.NoEviction && st.Evicted != 0 {
			t.Fatalf("noeviction evicted %d keys", st.Evicted)
		}
		verify(t, e)
	}
}
