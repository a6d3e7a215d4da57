package engine_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/nxkv/nxkv/engine"
)

// BenchmarkVolatileFullRefusal: a volatile-lru engine at its bound
// with n keys, none with a TTL. Every write is refused with ErrOOM; time one
// refusal, which should not grow with n (Redis answers OOM at once when no
// key has a TTL).
func BenchmarkVolatileFullRefusal(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run("keys="+strconv.Itoa(n), func(b *testing.B) {
			e := engine.New(engine.Options{MaxMemory: int64(n) * 80, Policy: engine.VolatileLRU})
			defer e.Close()
			for i := 0; ; i++ {
				if err := e.Set("k"+strconv.Itoa(i), "v"); err != nil {
					break
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := e.Set("new", "v"); !errors.Is(err, engine.ErrOOM) {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkVolatileSparseTTL: a volatile-lru engine at its bound with
// n keys, one in a hundred with a TTL; each write evicts one, sampling
// among the keys with a TTL (about Samples x 100 keys looked at).
func BenchmarkVolatileSparseTTL(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run("keys="+strconv.Itoa(n), func(b *testing.B) {
			e := engine.New(engine.Options{MaxMemory: int64(n) * 82, Policy: engine.VolatileLRU})
			defer e.Close()
			for i := range n {
				var err error
				if i%100 == 0 {
					err = e.SetPX("k"+strconv.Itoa(i), "v", time.Hour)
				} else {
					err = e.Set("k"+strconv.Itoa(i), "v")
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			for i := 0; e.MemoryStats().Evicted == 0; i++ {
				if err := e.SetPX("n"+strconv.Itoa(i), "v", time.Hour); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := e.SetPX("m"+strconv.Itoa(i), "v", time.Hour); err != nil {
					b.Fatalf("write %d: %v (%+v)", i, err, e.MemoryStats())
				}
			}
		})
	}
}
