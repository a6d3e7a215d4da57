package main

import (
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/puzpuzpuz/xsync/v4"
)

// MemRow is the heap cost per key of one in-process peer.
type MemRow struct {
	Peer       string  `json:"peer"`
	WithTTL    bool    `json:"with_ttl"`
	Keys       int     `json:"keys"`
	BytesPerKy float64 `json:"bytes_per_key"`
	Note       string  `json:"note,omitempty"`
}

// memPeer fills a fresh store with n keys and returns it (to keep it
// reachable while the heap is measured) and a function that frees it.
type memPeer struct {
	Name string
	Fill func(n int, withTTL bool) (store any, closeFn func(), err error)
}

// memKey and memValue allocate a fresh ~10-byte key and a distinct 16-byte
// value, as an application's keys and lock tokens would be: the strings
// are part of the cost (32 bytes per key in Go's size classes).
func memKey(i int) string   { return keyName(i) }
func memValue(i int) string { return "m" + strconv.FormatInt(int64(1e14+i), 10) }

const memTTL = time.Hour

func memPeers() []memPeer {
	return []memPeer{
		{Name: peerEngine, Fill: func(n int, ttl bool) (any, func(), error) {
			e, err := newEngine()
			if err != nil {
				return nil, nil, err
			}
			for i := range n {
				if ttl {
					_ = e.SetPX(memKey(i), memValue(i), memTTL)
				} else {
					e.Set(memKey(i), memValue(i))
				}
			}
			return e, func() { _ = e.Close() }, nil
		}},
		{Name: peerMapMutex, Fill: func(n int, ttl bool) (any, func(), error) {
			// Without TTL a plain map[string]string; with TTL the deadline
			// is kept in the value.
			var mu sync.Mutex
			if !ttl {
				m := map[string]string{}
				for i := range n {
					mu.Lock()
					m[memKey(i)] = memValue(i)
					mu.Unlock()
				}
				return m, func() {}, nil
			}
			m := map[string]mmEntry{}
			for i := range n {
				mu.Lock()
				m[memKey(i)] = mmEntry{v: memValue(i), dl: nowNano() + int64(memTTL)}
				mu.Unlock()
			}
			return m, func() {}, nil
		}},
		{Name: peerSyncMap, Fill: func(n int, ttl bool) (any, func(), error) {
			m := new(sync.Map)
			for i := range n {
				if ttl {
					m.Store(memKey(i), &mmEntry{v: memValue(i), dl: nowNano() + int64(memTTL)})
				} else {
					m.Store(memKey(i), memValue(i))
				}
			}
			return m, func() {}, nil
		}},
		{Name: peerXsync, Fill: func(n int, ttl bool) (any, func(), error) {
			if !ttl {
				m := xsync.NewMap[string, string]()
				for i := range n {
					m.Store(memKey(i), memValue(i))
				}
				return m, func() {}, nil
			}
			m := xsync.NewMap[string, mmEntry]()
			for i := range n {
				m.Store(memKey(i), mmEntry{v: memValue(i), dl: nowNano() + int64(memTTL)})
			}
			return m, func() {}, nil
		}},
		{Name: peerOtter, Fill: func(n int, ttl bool) (any, func(), error) {
			// Without TTL the cache has no expiry calculator (no timer
			// wheel); with TTL every entry carries its own.
			c := newOtterCache(ttl, 0)
			for i := range n {
				if ttl {
					c.Set(memKey(i), otterVal{v: memValue(i), ttl: memTTL})
				} else {
					c.Set(memKey(i), otterVal{v: memValue(i)})
				}
			}
			return c, func() { c.StopAllGoroutines() }, nil
		}},
		{Name: "miniredis (direct API)", Fill: func(n int, ttl bool) (any, func(), error) {
			m := miniredis.NewMiniRedis()
			for i := range n {
				k := memKey(i)
				if err := m.Set(k, memValue(i)); err != nil {
					return nil, nil, err
				}
				if ttl {
					m.SetTTL(k, memTTL)
				}
			}
			return m, m.Close, nil
		}},
	}
}

// heapPerKey fills a fresh store of p with n keys and returns the heap it
// added (after GC) per key.
func heapPerKey(p memPeer, n int, ttl bool) (float64, error) {
	h0 := heapAfterGC()
	store, closeFn, err := p.Fill(n, ttl)
	if err != nil {
		return 0, err
	}
	h1 := heapAfterGC()
	runtime.KeepAlive(store)
	closeFn()
	if h1 <= h0 {
		return 0, nil
	}
	return float64(h1-h0) / float64(n), nil
}

// runMemoryWorkload measures HeapAlloc after GC before and after filling
// each peer.
func runMemoryWorkload(cfg config, res *Results) {
	for _, p := range memPeers() {
		if !cfg.want(p.Name) {
			continue
		}
		for _, ttl := range []bool{false, true} {
			b, err := heapPerKey(p, cfg.MemKeys, ttl)
			if err != nil {
				res.skip("memory", p.Name, err.Error())
				break
			}
			res.Memory = append(res.Memory, MemRow{Peer: p.Name, WithTTL: ttl, Keys: cfg.MemKeys, BytesPerKy: b})
			progress("memory: %s, ttl=%v: %.1f B/key", p.Name, ttl, b)
			runtime.GC()
		}
	}
}
