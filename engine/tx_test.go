package engine

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestUpdateFrozenTime: every call of a section sees one time, even when
// the clock moves during the section.
func TestUpdateFrozenTime(t *testing.T) {
	e, mc := newTestEngine(t)
	e.SetPX("b", "v", time.Second)
	e.Update([]string{"a", "b"}, func(tx *Tx) {
		start := tx.Now()
		if _, err := tx.SetWith("a", "1", SetArgs{TTL: time.Second}); err != nil {
			t.Fatal(err)
		}
		mc.Add(time.Hour) // another goroutine's Add: the section does not see it
		if got := tx.Now(); !got.Equal(start) {
			t.Errorf("tx.Now() after the clock moved = %v, want %v", got, start)
		}
		if d, ok := tx.PTTL("a"); !ok || d != time.Second {
			t.Errorf("tx.PTTL(a) = %v, %v, want 1s, true", d, ok)
		}
		if v, ok := tx.Get("b"); !ok || v != "v" {
			t.Errorf("tx.Get(b) = %q, %v, want v, true", v, ok)
		}
	})
	wantGet(t, e, "a", "", false) // an hour later, outside the section
	wantGet(t, e, "b", "", false)
}

func TestUpdateUndeclaredKeyPanics(t *testing.T) {
	e, _ := newTestEngine(t)
	// Find a key in another shard than "a".
	other := ""
	for i := 0; other == ""; i++ {
		_, ki := e.m.Shard(e.m.Hash("k" + strconv.Itoa(i)))
		if _, ai := e.m.Shard(e.m.Hash("a")); ki != ai {
			other = "k" + strconv.Itoa(i)
		}
	}
	func() {
		defer func() {
			r := recover()
			if r == nil || !strings.Contains(fmt.Sprint(r), "not given to Update") {
				t.Errorf("recover() = %v, want a panic naming the undeclared key", r)
			}
		}()
		e.Update([]string{"a"}, func(tx *Tx) { tx.Set(other, "v") })
	}()
	// The panic released the shards.
	e.Set("a", "v")
	e.Set(other, "v")
	var kept *Tx
	e.Update([]string{"a"}, func(tx *Tx) { kept = tx })
	defer func() {
		if r := recover(); r == nil {
			t.Error("a Tx used after Update returned did not panic")
		}
	}()
	kept.Get("a")
}

// TestUpdateAtomic: transfers between two counters in sections never show
// a section an inconsistent sum, and single-key calls interleave safely.
func TestUpdateAtomic(t *testing.T) {
	e, _ := newTestEngine(t)
	keys := []string{"acct:a", "acct:b"}
	e.Set(keys[0], "1000")
	e.Set(keys[1], "1000")
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				from, to := keys[(w+i)%2], keys[(w+i+1)%2]
				e.Update(keys, func(tx *Tx) {
					if _, err := tx.IncrBy(from, -1); err != nil {
						t.Error(err)
					}
					if _, err := tx.IncrBy(to, 1); err != nil {
						t.Error(err)
					}
				})
			}
		}()
	}
	for range 500 {
		e.Update(keys, func(tx *Tx) {
			a, _ := tx.Get(keys[0])
			b, _ := tx.Get(keys[1])
			x, _ := strconv.Atoi(a)
			y, _ := strconv.Atoi(b)
			if x+y != 2000 {
				t.Errorf("sum inside a section = %d, want 2000", x+y)
			}
		})
	}
	wg.Wait()
}

func TestUpdateEveryShard(t *testing.T) {
	e, _ := newTestEngine(t)
	for i := range 100 {
		e.Set("k"+strconv.Itoa(i), "v")
	}
	e.SetPX("gone", "v", time.Nanosecond)
	var got []string
	e.Update(nil, func(tx *Tx) {
		tx.Range(func(k string) bool {
			got = append(got, k)
			return true
		})
		if n := tx.Del("k1", "k2", "absent"); n != 2 {
			t.Errorf("tx.Del(k1, k2, absent) = %d, want 2", n)
		}
	})
	if len(got) != 101 {
		t.Fatalf("tx.Range visited %d keys, want 101", len(got))
	}
	if n := e.Len(); n != 99 {
		t.Fatalf("Len() = %d, want 99", n)
	}
	ch, stop := e.Watch("k7")
	defer stop()
	e.Update(nil, func(tx *Tx) {
		if n := tx.Len(); n != 99 {
			t.Errorf("tx.Len() = %d, want 99", n)
		}
		tx.Flush()
		if n := tx.Len(); n != 0 {
			t.Errorf("tx.Len() after tx.Flush() = %d, want 0", n)
		}
	})
	if !closed(ch) {
		t.Fatal("tx.Flush did not wake the watcher of a deleted key")
	}
}

func TestScanVisitsEachKeyOnce(t *testing.T) {
	e, mc := newTestEngine(t)
	want := map[string]bool{}
	for i := range 1000 {
		k := "k" + strconv.Itoa(i)
		e.Set(k, "v")
		want[k] = true
	}
	e.SetPX("expiring", "v", time.Millisecond)
	mc.Add(2 * time.Millisecond)
	seen := map[string]int{}
	cursor, calls := uint64(0), 0
	for {
		cursor = e.Scan(cursor, func(k string) { seen[k]++ })
		calls++
		if cursor == 0 {
			break
		}
	}
	if calls != e.m.Shards() {
		t.Errorf("Scan calls = %d, want one per shard (%d)", calls, e.m.Shards())
	}
	for k, n := range seen {
		if n != 1 || !want[k] {
			t.Errorf("Scan visited %q %d times, want once and only live keys", k, n)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("Scan visited %d keys, want %d", len(seen), len(want))
	}
}

func TestFlush(t *testing.T) {
	e, _ := newTestEngine(t)
	e.Set("a", "v")
	e.SetPX("b", "v", time.Hour)
	fa, _, _ := e.SetNXPXFenced("lock", "t", time.Hour)
	ch, stop := e.Watch("b")
	defer stop()
	idle, stopIdle := e.Watch("absent")
	defer stopIdle()
	e.Flush()
	if n := e.Len(); n != 0 {
		t.Fatalf("Len() after Flush = %d, want 0", n)
	}
	if !closed(ch) {
		t.Fatal("Watch(b) did not fire on Flush")
	}
	if closed(idle) {
		t.Fatal("Watch(absent) fired on Flush, want pending: the key did not change")
	}
	if err := Verify(e); err != nil {
		t.Fatal(err)
	}
	fb, ok, _ := e.SetNXPXFenced("lock", "t", time.Hour)
	if !ok || fb <= fa {
		t.Fatalf("fence after Flush = %d, %v, want > %d", fb, ok, fa)
	}
	var keys []string
	e.Range(func(k string) bool { keys = append(keys, k); return true })
	if !slices.Equal(keys, []string{"lock"}) {
		t.Fatalf("Range after Flush = %q, want [lock]", keys)
	}
}

// TestFenceStrictlyIncreasing: fences of a key grow across release, expiry
// and re-creation, and several acquirers of one engine share one order.
func TestFenceStrictlyIncreasing(t *testing.T) {
	e, mc := newTestEngine(t)
	var last int64
	for i := range 50 {
		f, ok, err := e.SetNXPXFenced("lock", "t", time.Second)
		if !ok || err != nil || f <= last {
			t.Fatalf("round %d: SetNXPXFenced = %d, %v, %v, want > %d, true, nil", i, f, ok, err, last)
		}
		last = f
		if f2, ok, _ := e.SetNXPXFenced("lock", "u", time.Second); ok || f2 != 0 {
			t.Fatalf("round %d: SetNXPXFenced on a held key = %d, %v, want 0, false", i, f2, ok)
		}
		switch i % 3 {
		case 0:
			e.CompareAndDelete("lock", "t")
		case 1:
			mc.Add(2 * time.Second) // expiry
		case 2:
			e.Del("lock")
		}
	}
	if n := e.Len(); n > 1 {
		t.Fatalf("Len() = %d, want no key per fence", n)
	}
}

// TestIterationDeletesExpired: Range and Scan delete the expired keys they
// meet, as a read of each would, so the keys' watchers fire and Len drops
// without the reaper (stopped here by Close).
func TestIterationDeletesExpired(t *testing.T) {
	for _, iter := range []struct {
		name string
		run  func(e *Engine)
	}{
		{"Range", func(e *Engine) { e.Range(func(string) bool { return true }) }},
		{"Scan", func(e *Engine) {
			for c := e.Scan(0, func(string) {}); c != 0; c = e.Scan(c, func(string) {}) {
			}
		}},
	} {
		t.Run(iter.name, func(t *testing.T) {
			e, mc := newTestEngine(t)
			e.Close()
			e.Set("kept", "v")
			e.SetPX("lock", "token", time.Millisecond)
			changed, stop := e.Watch("lock")
			defer stop()
			mc.Add(2 * time.Millisecond)
			iter.run(e)
			select {
			case <-changed:
			default:
				t.Errorf("%s: watcher of the expired key met did not fire", iter.name)
			}
			if got := e.Len(); got != 1 {
				t.Errorf("%s: Len() = %d after meeting an expired key, want 1", iter.name, got)
			}
		})
	}
}

// TestReservedCounterNeverRepeats: a counter under ReservedPrefix, deleted
// by Del, Flush or expiry, resumes above every value it had (inside an
// Update too), while a plain key restarts at 1 as in Redis.
func TestReservedCounterNeverRepeats(t *testing.T) {
	e, mc := newTestEngine(t)
	const c = ReservedPrefix + "sem:{x}pool#f"
	var last int64
	next := func(round int, incr func() (int64, error)) {
		t.Helper()
		v, err := incr()
		if err != nil || v <= last {
			t.Fatalf("round %d: IncrBy(%q, 1) = %d, %v, want > %d", round, c, v, err, last)
		}
		last = v
	}
	for i := range 12 {
		if i%2 == 0 {
			next(i, func() (int64, error) { return e.IncrBy(c, 1) })
		} else {
			next(i, func() (v int64, err error) {
				e.Update([]string{c}, func(tx *Tx) { v, err = tx.IncrBy(c, 1) })
				return v, err
			})
		}
		switch i % 4 {
		case 0:
			e.Del(c)
		case 1:
			e.Flush()
		case 2:
			e.PExpire(c, time.Millisecond)
			mc.Add(2 * time.Millisecond)
		case 3:
			e.GetDel(c)
		}
	}
	e.IncrBy("plain", 5)
	e.Del("plain")
	if v, _ := e.IncrBy("plain", 1); v != 1 {
		t.Fatalf("IncrBy of a plain key after Del = %d, want 1 as in Redis", v)
	}
}

// TestReservedKeysStayOut: Len, Range, Scan and Flush (and Tx's) leave the
// keys under ReservedPrefix alone; their ...All forms include them; both
// delete expired keys they meet.
func TestReservedKeysStayOut(t *testing.T) {
	e, mc := newTestEngine(t)
	const r1, r2 = ReservedPrefix + "sem:{x}pool#0", ReservedPrefix + "sem:{x}pool#f"
	fill := func() {
		e.Set("a", "1")
		e.SetPX("b", "2", time.Hour)
		e.SetPX(r1, "lease", time.Hour)
		e.IncrBy(r2, 1)
		e.SetPX(ReservedPrefix+"gone", "x", time.Millisecond)
		e.SetPX("gone", "x", time.Millisecond)
	}
	fill()
	mc.Add(2 * time.Millisecond)
	keys := func(rng func(func(string) bool)) []string {
		var ks []string
		rng(func(k string) bool { ks = append(ks, k); return true })
		slices.Sort(ks)
		return ks
	}
	scan := func(scan func(uint64, func(string)) uint64) func(func(string) bool) {
		return func(fn func(string) bool) {
			for c := scan(0, func(k string) { fn(k) }); c != 0; c = scan(c, func(k string) { fn(k) }) {
			}
		}
	}
	user, all := []string{"a", "b"}, []string{"a", "b", r1, r2}
	for _, tc := range []struct {
		name string
		got  []string
		want []string
	}{
		{"Range", keys(e.Range), user},
		{"RangeAll", keys(e.RangeAll), all},
		{"Scan", keys(scan(e.Scan)), user},
		{"ScanAll", keys(scan(e.ScanAll)), all},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s = %q, want %q", tc.name, tc.got, tc.want)
		}
	}
	if n, m := e.Len(), e.LenAll(); n != 2 || m != 4 {
		t.Fatalf("Len, LenAll = %d, %d after the expired keys were met, want 2, 4", n, m)
	}
	e.Update(nil, func(tx *Tx) {
		if n, m := tx.Len(), tx.LenAll(); n != 2 || m != 4 {
			t.Errorf("tx.Len, tx.LenAll = %d, %d, want 2, 4", n, m)
		}
		if got := keys(tx.Range); !slices.Equal(got, user) {
			t.Errorf("tx.Range = %q, want %q", got, user)
		}
		if got := keys(tx.RangeAll); !slices.Equal(got, all) {
			t.Errorf("tx.RangeAll = %q, want %q", got, all)
		}
	})
	lease, stop := e.Watch(r1)
	defer stop()
	var events []Event
	stopListen := e.Listen(func(ev Event) { events = append(events, ev) })
	e.Flush()
	stopListen()
	if closed(lease) {
		t.Fatal("Flush fired the watch of a reserved key")
	}
	if len(events) != 1 || events[0].Kind != KindFlush {
		t.Fatalf("Flush reported %v to listeners, want one KindFlush", events)
	}
	if got := keys(e.RangeAll); !slices.Equal(got, []string{r1, r2}) || e.Len() != 0 || e.LenAll() != 2 {
		t.Fatalf("after Flush: RangeAll = %q, Len %d, LenAll %d; want the reserved keys only", got, e.Len(), e.LenAll())
	}
	e.Update(nil, func(tx *Tx) { tx.Flush() })
	if e.LenAll() != 2 {
		t.Fatalf("tx.Flush deleted reserved keys: LenAll = %d, want 2", e.LenAll())
	}
	e.FlushAll()
	if !closed(lease) || e.LenAll() != 0 {
		t.Fatalf("after FlushAll: watch fired %v, LenAll %d; want true, 0", closed(lease), e.LenAll())
	}
	fill()
	e.Update(nil, func(tx *Tx) { tx.FlushAll() })
	if e.LenAll() != 0 {
		t.Fatalf("tx.FlushAll left %d keys", e.LenAll())
	}
	if err := Verify(e); err != nil {
		t.Fatal(err)
	}
}
