package engine

// Memory per key and reclamation, measured with runtime.ReadMemStats after
// runtime.GC. The 1M-key runs take a few seconds, so the test runs only with
// NXKV_MEMTEST=1:
//
//	NXKV_MEMTEST=1 go test -run=TestMemory -v ./engine/
//	NXKV_MEMTEST=1 go test -run='^$' -bench=Memory ./engine/

import (
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
)

const memKeys = 1_000_000

// liveHeap returns the bytes of live heap objects after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// memKey and memValue build a 10-byte key and a 16-byte value; each call
// allocates the string it returns, as a real caller's data would.
func memKey(i int) string   { return "k" + strconv.Itoa(100_000_000+i) }
func memValue(i int) string { return "v" + strconv.Itoa(100_000_000_000_000+i) }

type memResult struct {
	engineBPK   float64 // engine bytes per key, keys with a TTL
	baselineBPK float64 // map[string]string + Mutex bytes per key, no TTL
	base        uint64  // live heap of the empty engine
	afterExpire uint64  // live heap after every key expired and Reap
	afterDelete uint64  // live heap after every key was deleted
	afterReaper uint64  // live heap after the reaper reclaimed every key
}

func measureMemory(tb testing.TB) memResult {
	tb.Helper()
	var r memResult

	// Baseline: the obvious map behind a mutex, measured the same way.
	before := liveHeap()
	mm := &mutexMap{m: make(map[string]string)}
	for i := range memKeys {
		mm.mu.Lock()
		mm.m[memKey(i)] = memValue(i)
		mm.mu.Unlock()
	}
	r.baselineBPK = float64(liveHeap()-before) / memKeys
	runtime.KeepAlive(mm)
	mm = nil

	mc := clock.NewMock()
	mc.Set(t0)
	e := New(Options{Clock: mc})
	e.Close() // reclamation below is by Reap: deterministic
	r.base = liveHeap()
	for i := range memKeys {
		e.SetPX(memKey(i), memValue(i), time.Hour+time.Duration(i)*time.Microsecond)
	}
	r.engineBPK = float64(liveHeap()-r.base) / memKeys
	mc.Add(2 * time.Hour)
	if n := e.Reap(); n != memKeys {
		tb.Fatalf("Reap() = %d, want %d", n, memKeys)
	}
	r.afterExpire = liveHeap()

	for i := range memKeys {
		e.Set(memKey(i), memValue(i))
	}
	keys := make([]string, 0, 1024)
	for i := range memKeys {
		keys = append(keys, memKey(i))
		if len(keys) == cap(keys) {
			e.Del(keys...)
			keys = keys[:0]
		}
	}
	e.Del(keys...)
	keys = nil
	r.afterDelete = liveHeap()
	if e.Len() != 0 {
		tb.Fatalf("Len() after deleting all = %d, want 0", e.Len())
	}
	runtime.KeepAlive(e)
	e = nil

	// The same mass expiry, reclaimed by the reaper on its own.
	e = New(Options{Clock: mc})
	defer e.Close()
	base := liveHeap()
	now := mc.Now()
	for i := range memKeys {
		e.SetPX(memKey(i), memValue(i), time.Minute+time.Duration(i)*time.Nanosecond)
	}
	last, stop := e.Watch(memKey(memKeys - 1))
	defer stop()
	mc.Set(now.Add(time.Minute + 10*time.Millisecond))
	<-last // the key with the latest deadline is reclaimed last
	for e.Len() != 0 {
		runtime.Gosched() // other shards may still be in the reaper's pass
	}
	r.afterReaper = liveHeap() - base + r.base
	return r
}

func TestMemory(t *testing.T) {
	if os.Getenv("NXKV_MEMTEST") != "1" {
		t.Skip("set NXKV_MEMTEST=1 to measure memory with 1M keys")
	}
	r := measureMemory(t)
	t.Logf("engine with TTL: %.1f B/key; map[string]string+Mutex without TTL: %.1f B/key", r.engineBPK, r.baselineBPK)
	t.Logf("live heap: empty engine %d B, after mass expiry %d B (%+.1f%%), after mass delete %d B (%+.1f%%)",
		r.base, r.afterExpire, pct(r.afterExpire, r.base), r.afterDelete, pct(r.afterDelete, r.base))
	if r.engineBPK > 110 {
		t.Errorf("engine uses %.1f B/key, want <= 110", r.engineBPK)
	}
	if pct(r.afterExpire, r.base) > 10 {
		t.Errorf("heap after mass expiry is %+.1f%% of the pre-insert baseline, want <= +10%%", pct(r.afterExpire, r.base))
	}
	t.Logf("live heap after the reaper reclaimed 1M expired keys: %+.1f%%", pct(r.afterReaper, r.base))
	if pct(r.afterReaper, r.base) > 10 {
		t.Errorf("heap after the reaper's mass expiry is %+.1f%% of the pre-insert baseline, want <= +10%%", pct(r.afterReaper, r.base))
	}
	if pct(r.afterDelete, r.base) > 10 {
		t.Errorf("heap after mass delete is %+.1f%% of the pre-insert baseline, want <= +10%%", pct(r.afterDelete, r.base))
	}
}

func pct(a, b uint64) float64 { return (float64(a) - float64(b)) / float64(b) * 100 }

func BenchmarkMemory(b *testing.B) {
	if os.Getenv("NXKV_MEMTEST") != "1" {
		b.Skip("set NXKV_MEMTEST=1 to measure memory with 1M keys")
	}
	var r memResult
	for range b.N {
		r = measureMemory(b)
	}
	b.ReportMetric(r.engineBPK, "B/key")
	b.ReportMetric(r.baselineBPK, "baseline-B/key")
	b.ReportMetric(pct(r.afterExpire, r.base), "%heap-after-expiry")
	b.ReportMetric(pct(r.afterDelete, r.base), "%heap-after-delete")
	b.ReportMetric(pct(r.afterReaper, r.base), "%heap-after-reaper")
	b.ReportMetric(0, "ns/op")
}
