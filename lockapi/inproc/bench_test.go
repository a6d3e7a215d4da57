package inproc_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/inproc"
)

func benchKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "bench:lock:" + strconv.Itoa(i)
	}
	return keys
}

// BenchmarkObtainRelease is one uncontended Obtain+Release cycle through
// lockapi on the in-process backend (real clock): on one key, or cycling
// over 4096 keys; with and without fencing tokens; on a FIFO Client, which
// passes every Obtain through its per-key queue; and with Lost called, which
// starts (and Release stops) a loss-monitor goroutine.
func BenchmarkObtainRelease(b *testing.B) {
	for _, tc := range []struct {
		name                string
		keys                int
		fencing, fifo, lost bool
	}{
		{"same-key,fencing", 1, true, false, false},
		{"distinct-keys,fencing", 4096, true, false, false},
		{"same-key,no-fencing", 1, false, false, false},
		{"distinct-keys,no-fencing", 4096, false, false, false},
		{"same-key,fencing,fifo", 1, true, true, false},
		{"same-key,fencing,lost-monitor", 1, true, false, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e := engine.New(engine.Options{})
			defer e.Close()
			c := lockapi.New(inproc.New(e, inproc.Options{NoFencing: !tc.fencing}), lockapi.Options{FIFO: tc.fifo})
			ks := benchKeys(tc.keys)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				l, err := c.Obtain(ctx, ks[i%len(ks)], time.Minute, nil)
				if err != nil {
					b.Fatal(err)
				}
				if tc.lost {
					l.Lost() // starts the loss monitor goroutine
				}
				if err := l.Release(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEngineCycle is the raw engine cycle under ObtainRelease (SET NX
// PX, then compare-and-delete, with a fixed token), to show what lockapi
// and fencing add.
func BenchmarkEngineCycle(b *testing.B) {
	e := engine.New(engine.Options{})
	defer e.Close()
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := e.SetNXPX("bench:lock", "token", time.Minute); !ok || err != nil {
			b.Fatal("SetNXPX failed")
		}
		if !e.CompareAndDelete("bench:lock", "token") {
			b.Fatal("CompareAndDelete failed")
		}
	}
}

// mapLock is the baseline: a map+Mutex lock with deadlines (SET NX with a
// deadline, then compare-and-delete), with a crypto/rand token per cycle.
type mapLock struct {
	mu sync.Mutex
	m  map[string]mapEntry // guarded by mu
}

type mapEntry struct {
	value    string
	deadline time.Time
}

func (m *mapLock) setNX(key, value string, ttl time.Duration) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	if e, ok := m.m[key]; ok && !now.After(e.deadline) {
		return false
	}
	m.m[key] = mapEntry{value, now.Add(ttl)}
	return true
}

func (m *mapLock) compareAndDelete(key, value string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.m[key]; !ok || e.value != value || time.Now().After(e.deadline) {
		return false
	}
	delete(m.m, key)
	return true
}

// BenchmarkBaselineMapMutex is the same cycle on a plain map+Mutex with a
// crypto/rand token, for comparison in the same run.
func BenchmarkBaselineMapMutex(b *testing.B) {
	for _, keys := range []int{1, 4096} {
		name := "same-key"
		if keys > 1 {
			name = "distinct-keys"
		}
		b.Run(name, func(b *testing.B) {
			m := &mapLock{m: make(map[string]mapEntry)}
			ks := benchKeys(keys)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var raw [16]byte
				rand.Read(raw[:])
				tok := hex.EncodeToString(raw[:])
				k := ks[i%len(ks)]
				if !m.setNX(k, tok, time.Minute) {
					b.Fatal("setNX failed")
				}
				if !m.compareAndDelete(k, tok) {
					b.Fatal("compareAndDelete failed")
				}
			}
		})
	}
}

// BenchmarkHandoff measures the latency from the start of a Release to the
// return of the Obtain of a waiter blocked on the same key, with 8 waiters
// (real clock), and reports the median and the 99th percentile.
//
// fifo: one FIFO Client; the waiters take turns, so each acquisition is a
// hand-off to the queue head, normally blocked on the engine's Watch (or,
// if the holder was very quick, still making its attempt).
// unfair: a plain Client; a releaser does not try again before someone
// else acquired, so the lock goes to one of the other 7 goroutines: those
// blocked in Obtain are all woken by the release and race for it, and the
// previous releaser, just entering Obtain, may win with its first attempt.
func BenchmarkHandoff(b *testing.B) {
	for _, fifo := range []bool{true, false} {
		name := "unfair"
		if fifo {
			name = "fifo"
		}
		b.Run(name+",waiters=8", func(b *testing.B) { benchHandoff(b, 8, fifo) })
	}
}

func benchHandoff(b *testing.B, waiters int, fifo bool) {
	e := engine.New(engine.Options{})
	defer e.Close()
	c := lockapi.New(inproc.New(e, inproc.Options{}), lockapi.Options{FIFO: fifo})
	ctx := context.Background()
	retry := &lockapi.ObtainOptions{Retry: lockapi.LinearBackoff(time.Hour)}
	base := time.Now()
	var releasedAt atomic.Int64 // ns since base at the start of the last Release; 0 before the first
	var remaining, completed atomic.Int64
	remaining.Store(int64(b.N))
	allDone := make(chan struct{})
	// turn is closed by the next acquirer, letting the previous holder
	// (unfair mode) compete again.
	var turn atomic.Pointer[chan struct{}]
	first := make(chan struct{})
	turn.Store(&first)
	lat := make([][]int64, waiters)
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	for w := 0; w < waiters; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for remaining.Add(-1) >= 0 {
				l, err := c.Obtain(ctx, "handoff", time.Minute, retry)
				now := int64(time.Since(base))
				if err != nil {
					b.Error(err)
					return
				}
				if r := releasedAt.Load(); r != 0 {
					lat[w] = append(lat[w], now-r)
				}
				mine := make(chan struct{})
				close(*turn.Swap(&mine))
				if completed.Add(1) == int64(b.N) {
					close(allDone)
				}
				releasedAt.Store(int64(time.Since(base)))
				if err := l.Release(ctx); err != nil {
					b.Error(err)
					return
				}
				if !fifo {
					select {
					case <-mine:
					case <-allDone:
					}
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	all := slices.Concat(lat...)
	if len(all) == 0 {
		return
	}
	slices.Sort(all)
	b.ReportMetric(float64(all[len(all)/2]), "p50-ns")
	b.ReportMetric(float64(all[len(all)*99/100]), "p99-ns")
}
