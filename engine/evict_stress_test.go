package engine_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nxkv/nxkv/engine"
)

// TestEvictionStress: concurrent writers, lock holders, reserved
// counters, GetOrLoad callers with cancellation, and flushes over an
// allkeys-lru engine. Eviction must never take a held lock or a reserved
// key; a lock key's fences strictly increase; Verify holds throughout.
func TestEvictionStress(t *testing.T) {
	for _, p := range []engine.Policy{engine.AllKeysLRU, engine.AllKeysLFU, engine.AllKeysRandom, engine.VolatileTTL} {
		t.Run(p.String(), func(t *testing.T) {
			e := engine.New(engine.Options{MaxMemory: 32 << 10, Policy: p, Shards: 4})
			defer e.Close()
			var bad atomic.Value
			var evicted atomic.Int64
			stop := e.Listen(func(ev engine.Event) {
				if ev.Kind != engine.KindEvicted {
					return
				}
				evicted.Add(1)
				if engine.Reserved(ev.Key) || strings.HasPrefix(ev.Key, "lock:") {
					bad.CompareAndSwap(nil, "evicted "+ev.Key)
				}
			})
			defer stop()
			var wg sync.WaitGroup
			const iters = 3000
			// writers
			for g := range 2 {
				wg.Go(func() {
					r := rand.New(rand.NewPCG(uint64(g), 1))
					val := strings.Repeat("x", 100)
					for i := range iters {
						k := "w" + strconv.Itoa(g) + ":" + strconv.Itoa(r.IntN(2000))
						var err error
						switch i % 4 {
						case 0:
							err = e.Set(k, val)
						case 1:
							err = e.SetPX(k, val, time.Hour)
						case 2:
							e.Update([]string{k, k + "b"}, func(tx *engine.Tx) {
								if err = tx.Set(k, val); err == nil {
									_, err = tx.SetWith(k+"b", val, engine.SetArgs{TTL: time.Hour})
								}
							})
						case 3:
							_, err = e.IncrBy(engine.ReservedPrefix+"c"+strconv.Itoa(r.IntN(20)), 1)
						}
						if err != nil && !errors.Is(err, engine.ErrOOM) {
							t.Errorf("write: %v", err)
							return
						}
					}
				})
			}
			// lock holders: take, hold a while, release; fences must grow per key.
			for g := range 2 {
				wg.Go(func() {
					last := map[string]int64{}
					for i := range iters {
						k := "lock:" + strconv.Itoa((g*7+i)%10)
						tok := strconv.Itoa(g) + "-" + strconv.Itoa(i)
						f, ok, err := e.SetNXPXFenced(k, tok, time.Hour)
						if err != nil && !errors.Is(err, engine.ErrOOM) {
							t.Errorf("lock: %v", err)
							return
						}
						if !ok {
							continue
						}
						if f <= last[k] {
							t.Errorf("fence of %s went %d -> %d", k, last[k], f)
						}
						last[k] = f
						if v, ok := e.Get(k); !ok || v != tok {
							bad.CompareAndSwap(nil, "lock "+k+" lost while held")
						}
						if !e.CompareAndDelete(k, tok) {
							bad.CompareAndSwap(nil, "lock "+k+" gone before release")
						}
					}
				})
			}
			// GetOrLoad with cancellations.
			wg.Go(func() {
				for i := range iters / 3 {
					ctx, cancel := context.WithCancel(context.Background())
					if i%3 == 0 {
						cancel()
					}
					_, err := e.GetOrLoad(ctx, "load:"+strconv.Itoa(i%50), time.Hour, func(ctx context.Context, key string) (string, error) {
						return "loaded-" + key, nil
					})
					cancel()
					if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, engine.ErrOOM) {
						t.Errorf("GetOrLoad: %v", err)
					}
					if i%200 == 0 {
						e.Del("w0:1", "w1:1", "load:1")
						if err := e.Verify(); err != nil {
							t.Errorf("Verify: %v", err)
						}
					}
				}
			})
			wg.Wait()
			if b := bad.Load(); b != nil {
				t.Fatal(b)
			}
			if err := e.Verify(); err != nil {
				t.Fatal(err)
			}
			st := e.MemoryStats()
			t.Logf("%+v evicted events %d", st, evicted.Load())
			if st.Used > st.Max+6*300 {
				t.Fatalf("Used %d over Max %d by more than a write per writer", st.Used, st.Max)
			}
		})
	}
}
