package engine

// Micro-benchmarks of the engine's hot paths beside baselines measured in
// the same run: a plain map, a map behind one sync.Mutex, sync.Map and the
// clock reads. (The shard's hash against xxhash is in the bench module,
// BenchmarkHash, so that this module need not require xxhash.) Run:
//
//	go test -run='^$' -bench=. -count=6 ./engine/ | tee /tmp/engine-bench.txt
//	benchstat /tmp/engine-bench.txt

import (
	"fmt"
	"hash/maphash"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const hotKeys = 1024 // the hot set; a power of two so i&(hotKeys-1) picks a key

var (
	sinkS string
	sinkB bool
	sinkI int64
	sinkT time.Time
)

// benchKeys returns n distinct ~10-byte keys.
func benchKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "key:" + strconv.Itoa(100000+i)
	}
	return keys
}

// newBenchEngine returns an engine on the real clock with keys set to "v",
// with a TTL when ttl > 0.
func newBenchEngine(b *testing.B, keys []string, ttl time.Duration) *Engine {
	b.Helper()
	e := New(Options{})
	b.Cleanup(func() { e.Close() })
	for _, k := range keys {
		if ttl > 0 {
			e.SetPX(k, "v", ttl)
		} else {
			e.Set(k, "v")
		}
	}
	return e
}

func BenchmarkGet(b *testing.B) {
	keys := benchKeys(hotKeys)
	e := newBenchEngine(b, keys, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkS, sinkB = e.Get(keys[i&(hotKeys-1)])
	}
}

// BenchmarkGetTTL reads keys that have a deadline: one clock read each.
func BenchmarkGetTTL(b *testing.B) {
	keys := benchKeys(hotKeys)
	e := newBenchEngine(b, keys, time.Hour)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkS, sinkB = e.Get(keys[i&(hotKeys-1)])
	}
}

// BenchmarkSetNX is the fail path: every key exists (no TTL).
func BenchmarkSetNX(b *testing.B) {
	keys := benchKeys(hotKeys)
	e := newBenchEngine(b, keys, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkB, _ = e.SetNX(keys[i&(hotKeys-1)], "w")
	}
}

// BenchmarkSetNXDel is a SetNX that creates the key plus the Del that
// removes it: two operations per iteration.
func BenchmarkSetNXDel(b *testing.B) {
	keys := benchKeys(hotKeys)
	e := newBenchEngine(b, nil, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := keys[i&(hotKeys-1)]
		sinkB, _ = e.SetNX(k, "w")
		e.Del(k)
	}
}

// BenchmarkSetNXPX is the fail path of a lock acquisition: every key is a
// held lock (it has a TTL, so the clock is read to check it).
func BenchmarkSetNXPX(b *testing.B) {
	keys := benchKeys(hotKeys)
	e := newBenchEngine(b, keys, time.Hour)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkB, _ = e.SetNXPX(keys[i&(hotKeys-1)], "w", 30*time.Second)
	}
}

// BenchmarkLockCycle is a whole lock: SetNXPX that acquires plus the
// CompareAndDelete that releases; two operations per iteration.
func BenchmarkLockCycle(b *testing.B) {
	keys := benchKeys(hotKeys)
	e := newBenchEngine(b, nil, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := keys[i&(hotKeys-1)]
		sinkB, _ = e.SetNXPX(k, "tok", 30*time.Second)
		sinkB = e.CompareAndDelete(k, "tok")
	}
}

// BenchmarkCompareAndDelete is the mismatch path (another owner's token).
func BenchmarkCompareAndDelete(b *testing.B) {
	keys := benchKeys(hotKeys)
	e := newBenchEngine(b, keys, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkB = e.CompareAndDelete(keys[i&(hotKeys-1)], "other")
	}
}

// BenchmarkCompareAndPExpire is a lock refresh on held locks.
func BenchmarkCompareAndPExpire(b *testing.B) {
	keys := benchKeys(hotKeys)
	e := newBenchEngine(b, keys, time.Hour)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkB, _ = e.CompareAndPExpire(keys[i&(hotKeys-1)], "v", time.Hour)
	}
}

// BenchmarkGetSet overwrites existing keys (no TTL) in place.
func BenchmarkGetSet(b *testing.B) {
	keys := benchKeys(hotKeys)
	e := newBenchEngine(b, keys, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkS, sinkB, _ = e.GetSet(keys[i&(hotKeys-1)], "w")
	}
}

// BenchmarkSet overwrites existing keys (no TTL) in place.
func BenchmarkSet(b *testing.B) {
	keys := benchKeys(hotKeys)
	e := newBenchEngine(b, keys, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Set(keys[i&(hotKeys-1)], "w")
	}
}

// BenchmarkSetPX overwrites existing keys with a new TTL (a wheel
// reschedule).
func BenchmarkSetPX(b *testing.B) {
	keys := benchKeys(hotKeys)
	e := newBenchEngine(b, keys, time.Hour)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.SetPX(keys[i&(hotKeys-1)], "w", time.Duration(i&1023+1)*time.Second)
	}
}

// --- Baselines ---

// mutexMap is the obvious alternative: one map behind one mutex.
type mutexMap struct {
	mu sync.Mutex
	m  map[string]string
}

func (m *mutexMap) setNX(k, v string) bool {
	m.mu.Lock()
	if _, ok := m.m[k]; ok {
		m.mu.Unlock()
		return false
	}
	m.m[k] = v
	m.mu.Unlock()
	return true
}

func (m *mutexMap) set(k, v string) {
	m.mu.Lock()
	m.m[k] = v
	m.mu.Unlock()
}

func (m *mutexMap) get(k string) (string, bool) {
	m.mu.Lock()
	v, ok := m.m[k]
	m.mu.Unlock()
	return v, ok
}

func (m *mutexMap) del(k string) {
	m.mu.Lock()
	delete(m.m, k)
	m.mu.Unlock()
}

func newMutexMap(keys []string) *mutexMap {
	m := &mutexMap{m: make(map[string]string)}
	for _, k := range keys {
		m.m[k] = "v"
	}
	return m
}

func BenchmarkBaselineMutexMapSetNX(b *testing.B) {
	keys := benchKeys(hotKeys)
	m := newMutexMap(keys)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkB = m.setNX(keys[i&(hotKeys-1)], "w")
	}
}

func BenchmarkBaselineMutexMapGet(b *testing.B) {
	keys := benchKeys(hotKeys)
	m := newMutexMap(keys)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkS, sinkB = m.get(keys[i&(hotKeys-1)])
	}
}

func BenchmarkBaselineMapGet(b *testing.B) {
	keys := benchKeys(hotKeys)
	m := newMutexMap(keys).m
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkS, sinkB = m[keys[i&(hotKeys-1)]]
	}
}

// BenchmarkBaselineMutexMapSetNXDeadline is SET NX PX done naively: a map
// of value and deadline behind a mutex, with time.Now for the deadline.
func BenchmarkBaselineMutexMapSetNXDeadline(b *testing.B) {
	type entry struct {
		v   string
		exp int64
	}
	keys := benchKeys(hotKeys)
	var mu sync.Mutex
	m := make(map[string]entry)
	for _, k := range keys {
		m[k] = entry{"v", time.Now().Add(time.Hour).UnixNano()}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := keys[i&(hotKeys-1)]
		mu.Lock()
		now := time.Now().UnixNano()
		if en, ok := m[k]; ok && now <= en.exp {
			sinkB = false
		} else {
			m[k] = entry{"w", now + int64(30*time.Second)}
			sinkB = true
		}
		mu.Unlock()
	}
}

func BenchmarkBaselineSyncMapLoadOrStore(b *testing.B) {
	keys := benchKeys(hotKeys)
	var m sync.Map
	for _, k := range keys {
		m.Store(k, "v")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, sinkB = m.LoadOrStore(keys[i&(hotKeys-1)], "w")
	}
}

func BenchmarkBaselineTimeNow(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sinkT = time.Now()
	}
}

func BenchmarkBaselineTimeSince(b *testing.B) {
	start := time.Now()
	for i := 0; i < b.N; i++ {
		sinkI = int64(time.Since(start))
	}
}

// BenchmarkFastClock is the engine's real-clock read (wall at New plus
// monotonic time since).
func BenchmarkFastClock(b *testing.B) {
	e := New(Options{})
	defer e.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkI = e.tm.Nano()
	}
}

// --- Parallelism: goroutines on disjoint keys ---

// benchParallel runs op on g goroutines, each over its own 1,024 keys, and
// reports ns per operation of the whole group (wall time / total ops): a
// perfect 2x speed-up halves it. Each goroutine counts its results in a
// local variable: a shared sink would put a cache line that both cores write
// on every operation into the measurement.
func benchParallel(b *testing.B, g int, setup func(keys []string) func(k string) bool) {
	keys := benchKeys(g * hotKeys)
	op := setup(keys)
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	var total atomic.Int64
	per := b.N / g
	for w := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := keys[w*hotKeys : (w+1)*hotKeys]
			n := 0
			for i := 0; i < per; i++ {
				if op(mine[i&(hotKeys-1)]) {
					n++
				}
			}
			total.Add(int64(n))
		}()
	}
	wg.Wait()
	sinkI = total.Load()
}

// parallelShards are the shard counts the parallel benchmarks compare: the
// default (few shards, so both goroutines' keys share every shard and the
// shard locks' cache lines move between the cores on almost every
// operation) and more shards than hot keys (each goroutine's keys mostly in
// shards of their own).
var parallelShards = []int{0, 4096}

func benchParallelEngine(b *testing.B, ttl time.Duration, op func(e *Engine, k string) bool) {
	for _, shards := range parallelShards {
		for _, g := range []int{1, 2} {
			b.Run(fmt.Sprintf("shards=%d/goroutines=%d", shards, g), func(b *testing.B) {
				benchParallel(b, g, func(keys []string) func(string) bool {
					e := New(Options{Shards: shards})
					b.Cleanup(func() { e.Close() })
					for _, k := range keys {
						switch {
						case ttl > 0:
							e.SetPX(k, "v", ttl)
						case ttl == 0:
							e.Set(k, "v")
						} // ttl < 0: no keys stored
					}
					return func(k string) bool { return op(e, k) }
				})
			})
		}
	}
}

func BenchmarkParallelSetNX(b *testing.B) {
	benchParallelEngine(b, 0, func(e *Engine, k string) bool { ok, _ := e.SetNX(k, "w"); return ok })
}

func BenchmarkParallelGet(b *testing.B) {
	benchParallelEngine(b, 0, func(e *Engine, k string) bool { _, ok := e.Get(k); return ok })
}

func BenchmarkParallelSetNXPX(b *testing.B) {
	benchParallelEngine(b, time.Hour, func(e *Engine, k string) bool {
		ok, _ := e.SetNXPX(k, "w", time.Second)
		return ok
	})
}

// BenchmarkParallelSetNXDel creates each key with SetNX and deletes it:
// two operations per iteration, each locking its shard, the SetNX from its
// lock-free lookup.
func BenchmarkParallelSetNXDel(b *testing.B) {
	benchParallelEngine(b, -1, func(e *Engine, k string) bool {
		ok, _ := e.SetNX(k, "w")
		e.Del(k)
		return ok
	})
}

// BenchmarkParallelSet overwrites keys: every operation locks its shard.
func BenchmarkParallelSet(b *testing.B) {
	benchParallelEngine(b, 0, func(e *Engine, k string) bool { e.Set(k, "w"); return true })
}

// BenchmarkParallelLockCycle acquires and releases locks on distinct keys:
// an insert and a delete, each locking its shard.
func BenchmarkParallelLockCycle(b *testing.B) {
	benchParallelEngine(b, -1, func(e *Engine, k string) bool {
		ok, _ := e.SetNXPX(k, "tok", 30*time.Second)
		e.CompareAndDelete(k, "tok")
		return ok
	})
}

// BenchmarkParallelSetOwnShards is BenchmarkParallelSet with each
// goroutine's keys chosen from shards of its own (even shards for one, odd
// for the other) in one shared engine: the keys still share the engine, but
// no shard's lock word or entries are written by both cores. Set that
// scales here and not in BenchmarkParallelSet is the measure of what the
// shards' cache lines moving between cores cost.
func BenchmarkParallelSetOwnShards(b *testing.B) {
	for _, g := range []int{1, 2} {
		b.Run("goroutines="+strconv.Itoa(g), func(b *testing.B) {
			e := New(Options{})
			b.Cleanup(func() { e.Close() })
			keys := make([][]string, g)
			for i, full := 0, 0; full < g; i++ {
				k := "key:" + strconv.Itoa(100000+i)
				_, si := e.m.Shard(e.m.Hash(k))
				if w := si % 2; w < g && len(keys[w]) < hotKeys {
					keys[w] = append(keys[w], k)
					e.Set(k, "v")
					if len(keys[w]) == hotKeys {
						full++
					}
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			var wg sync.WaitGroup
			per := b.N / g
			for _, mine := range keys {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < per; i++ {
						e.Set(mine[i&(hotKeys-1)], "w")
					}
				}()
			}
			wg.Wait()
		})
	}
}

// BenchmarkParallelPrivateSetNX gives each goroutine an engine of its own:
// nothing is shared, so its speed-up is the most this machine gives this
// workload, the ceiling for the shared-engine figures above.
func BenchmarkParallelPrivateSetNX(b *testing.B) {
	benchParallelPrivate(b, func(e *Engine, k string) bool { ok, _ := e.SetNX(k, "w"); return ok })
}

// BenchmarkParallelPrivateSet is BenchmarkParallelPrivateSetNX for
// overwrites, the ceiling for BenchmarkParallelSet: what is left of the
// shared engine's gap to it is the cost of both goroutines' keys sharing
// shards (their lock words and entries move between the cores).
func BenchmarkParallelPrivateSet(b *testing.B) {
	benchParallelPrivate(b, func(e *Engine, k string) bool { e.Set(k, "w"); return true })
}

func benchParallelPrivate(b *testing.B, op func(e *Engine, k string) bool) {
	for _, g := range []int{1, 2} {
		b.Run("goroutines="+strconv.Itoa(g), func(b *testing.B) {
			keys := benchKeys(hotKeys)
			engines := make([]*Engine, g)
			for w := range engines {
				engines[w] = newBenchEngine(b, keys, 0)
			}
			b.ReportAllocs()
			b.ResetTimer()
			var wg sync.WaitGroup
			var total atomic.Int64
			per := b.N / g
			for _, e := range engines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					n := 0
					for i := 0; i < per; i++ {
						if op(e, keys[i&(hotKeys-1)]) {
							n++
						}
					}
					total.Add(int64(n))
				}()
			}
			wg.Wait()
			sinkI = total.Load()
		})
	}
}

func BenchmarkParallelBaselineMutexMapSetNX(b *testing.B) {
	for _, g := range []int{1, 2} {
		b.Run("goroutines="+strconv.Itoa(g), func(b *testing.B) {
			benchParallel(b, g, func(keys []string) func(string) bool {
				m := newMutexMap(keys)
				return func(k string) bool { return m.setNX(k, "w") }
			})
		})
	}
}

// BenchmarkParallelBaselineMutexMapSetNXDel is the baseline of
// BenchmarkParallelSetNXDel.
func BenchmarkParallelBaselineMutexMapSetNXDel(b *testing.B) {
	for _, g := range []int{1, 2} {
		b.Run("goroutines="+strconv.Itoa(g), func(b *testing.B) {
			benchParallel(b, g, func(keys []string) func(string) bool {
				m := newMutexMap(nil)
				return func(k string) bool { ok := m.setNX(k, "w"); m.del(k); return ok }
			})
		})
	}
}

// BenchmarkParallelBaselineMutexMapSet is the baseline of
// BenchmarkParallelSet: both goroutines overwrite keys of one map+Mutex.
func BenchmarkParallelBaselineMutexMapSet(b *testing.B) {
	for _, g := range []int{1, 2} {
		b.Run("goroutines="+strconv.Itoa(g), func(b *testing.B) {
			benchParallel(b, g, func(keys []string) func(string) bool {
				m := newMutexMap(keys)
				return func(k string) bool { m.set(k, "w"); return true }
			})
		})
	}
}

// --- 1M keys: random access over a set far larger than the caches ---

const bigKeys = 1 << 20

var (
	bigOnce sync.Once
	bigSet  []string
)

func bigKeySet() []string {
	bigOnce.Do(func() { bigSet = benchKeys(bigKeys) })
	return bigSet
}

// rnd is a xorshift generator: cheap enough not to dominate the loop.
type rnd uint64

func (r *rnd) next() uint64 {
	x := uint64(*r)
	x ^= x << 13
	x ^= x >> 7
	x ^= x << 17
	*r = rnd(x)
	return x
}

func BenchmarkBig(b *testing.B) {
	keys := bigKeySet()
	e := New(Options{})
	defer e.Close()
	m := newMutexMap(nil)
	for _, k := range keys {
		e.Set(k, "v")
		m.m[k] = "v"
	}
	b.Run("Get", func(b *testing.B) {
		r := rnd(88172645463325252)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			sinkS, sinkB = e.Get(keys[r.next()&(bigKeys-1)])
		}
	})
	b.Run("SetNX", func(b *testing.B) {
		r := rnd(88172645463325252)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			sinkB, _ = e.SetNX(keys[r.next()&(bigKeys-1)], "w")
		}
	})
	b.Run("BaselineMutexMapGet", func(b *testing.B) {
		r := rnd(88172645463325252)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			sinkS, sinkB = m.get(keys[r.next()&(bigKeys-1)])
		}
	})
	b.Run("BaselineMutexMapSetNX", func(b *testing.B) {
		r := rnd(88172645463325252)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			sinkB = m.setNX(keys[r.next()&(bigKeys-1)], "w")
		}
	})
}

// BenchmarkParallelBaselineHash calibrates the parallel benchmarks: pure
// computation with no shared memory (hashing the key), so it shows how much
// of a 2x speed-up the machine gives at all.
func BenchmarkParallelBaselineHash(b *testing.B) {
	seed := maphash.MakeSeed()
	for _, g := range []int{1, 2} {
		b.Run("goroutines="+strconv.Itoa(g), func(b *testing.B) {
			benchParallel(b, g, func(keys []string) func(string) bool {
				return func(k string) bool { return maphash.String(seed, k)&1 == 0 }
			})
		})
	}
}

// BenchmarkUpdate is a two-key section that reads one key and writes
// another, as a multi-key lock or a script does.
func BenchmarkUpdate(b *testing.B) {
	keys := benchKeys(hotKeys)
	e := newBenchEngine(b, keys, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k1, k2 := keys[i&(hotKeys-1)], keys[(i+1)&(hotKeys-1)]
		e.Update([]string{k1, k2}, func(tx *Tx) {
			if v, ok := tx.Get(k1); ok {
				tx.Set(k2, v)
			}
		})
	}
}

// BenchmarkListen is what the change feed costs writes: two engines run the
// same loop in alternating timed chunks (as BenchmarkVs does), one with no
// listener (every engine's default) and one with a listener that counts
// events; it reports each one's median ns/op and their ratio. The lock
// cycle reports four events per iteration (new, set, expire, del); Set on
// a held key one.
func BenchmarkListen(b *testing.B) {
	ops := []struct {
		name string
		held bool
		run  func(e *Engine, k string)
	}{
		{"Set", true, func(e *Engine, k string) { e.Set(k, "w") }},
		{"LockCycle", false, func(e *Engine, k string) {
			sinkB, _ = e.SetNXPX(k, "tok", 30*time.Second)
			sinkB = e.CompareAndDelete(k, "tok")
		}},
	}
	for _, op := range ops {
		b.Run("op="+op.name, func(b *testing.B) {
			var engines [2]*Engine
			var keys [2][]string
			for j := range engines {
				keys[j] = benchKeys(hotKeys)
				var held []string
				if op.held {
					held = keys[j]
				}
				engines[j] = newBenchEngine(b, held, 0)
			}
			var events int64
			defer engines[1].Listen(func(Event) { events++ })()
			none, one := alternate(b, func(j, i int) { op.run(engines[j], keys[j][i&(hotKeys-1)]) })
			sinkI = events
			b.ReportMetric(none, "unheard-ns/op")
			b.ReportMetric(one, "listened-ns/op")
			b.ReportMetric(one/none, "cost")
			b.ReportMetric(0, "ns/op")
		})
	}
}
