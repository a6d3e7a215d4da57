package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/maypok86/otter/v2"
	"github.com/nxkv/nxkv/engine"
	"github.com/puzpuzpuz/xsync/v4"
	"github.com/redis/go-redis/v9"
)

// kvStore is the Redis-string subset every raw-operation peer implements with
// Redis semantics: a key whose deadline has passed is absent to every
// operation. Peers that keep no TTL bookkeeping of their own store the
// deadline next to the value and check it on every access, as a user of that
// map would have to.
type kvStore interface {
	Get(key string) (string, bool)
	Set(key, value string)
	GetSet(key, value string) (string, bool)
	SetNX(key, value string) bool
	SetNXPX(key, value string, ttl time.Duration) bool
	CompareAndDelete(key, value string) bool
	// setMany and delMany prepare state outside the timed sections; network
	// peers pipeline them.
	setMany(keys []string, value string)
	delMany(keys []string)
	// Err reports the first transport error a network peer met, nil for
	// in-process peers.
	Err() error
	Close()
}

// farTTL stands for "no expiry" where an API needs a duration (otter).
const farTTL = 100 * 365 * 24 * time.Hour

// nowNano reads the wall clock once; peers call it only when an operation
// needs the time, as the engine does.
func nowNano() int64 { return time.Now().UnixNano() }

// alive reports whether an entry with deadline dl (0: none) is visible at
// now; now is read lazily so entries without a deadline never pay for it.
func alive(dl int64) bool { return dl == 0 || nowNano() <= dl }

// ---- nxkv engine ----

type engineKV struct{ e *engine.Engine }

var _ kvStore = (*engineKV)(nil)

// newEngine starts an engine and probes every method the suite calls: until
// the engine lands its bodies panic, and the peer is then reported as not
// available instead of crashing the run.
func newEngine() (e *engine.Engine, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("engine not available: %v", r)
		}
	}()
	e = engine.New(engine.Options{})
	probe := func() {
		const k = "nxkv-bench-probe"
		e.Set(k, "a")
		e.Get(k)
		e.GetSet(k, "b")
		e.SetNX(k, "c")
		e.CompareAndDelete(k, "b")
		if _, err := e.SetNXPX(k, "d", time.Minute); err != nil {
			panic(err)
		}
		if err := e.SetPX(k, "d", time.Minute); err != nil {
			panic(err)
		}
		e.Del(k)
		e.Len()
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				_ = e.Close()
				panic(r)
			}
		}()
		probe()
	}()
	return e, nil
}

func newEngineKV() (kvStore, error) {
	e, err := newEngine()
	if err != nil {
		return nil, err
	}
	return &engineKV{e: e}, nil
}

func (p *engineKV) Get(k string) (string, bool)       { return p.e.Get(k) }
func (p *engineKV) Set(k, v string)                   { p.e.Set(k, v) }
func (p *engineKV) GetSet(k, v string) (string, bool) { old, ok, _ := p.e.GetSet(k, v); return old, ok }
func (p *engineKV) SetNX(k, v string) bool            { ok, _ := p.e.SetNX(k, v); return ok }
func (p *engineKV) CompareAndDelete(k, v string) bool { return p.e.CompareAndDelete(k, v) }
func (p *engineKV) Err() error                        { return nil }
func (p *engineKV) Close()                            { _ = p.e.Close() }
func (p *engineKV) setMany(keys []string, v string)   { setEach(p, keys, v) }
func (p *engineKV) delMany(keys []string)             { p.e.Del(keys...) }
func (p *engineKV) SetNXPX(k, v string, ttl time.Duration) bool {
	ok, _ := p.e.SetNXPX(k, v, ttl)
	return ok
}

func setEach(s kvStore, keys []string, v string) {
	for _, k := range keys {
		s.Set(k, v)
	}
}

// ---- map + sync.Mutex: the baseline ----

// mmEntry is a value with its deadline in Unix nanoseconds, 0 for none.
type mmEntry struct {
	v  string
	dl int64
}

// mapMutexKV is the obvious implementation: one map, one mutex. The clock is
// read inside the critical section, and only for entries with a deadline or
// operations that set one, exactly as the engine is required to.
type mapMutexKV struct {
	mu sync.Mutex
	m  map[string]mmEntry // guarded by mu
}

var _ kvStore = (*mapMutexKV)(nil)

func newMapMutexKV() (kvStore, error) { return &mapMutexKV{m: make(map[string]mmEntry)}, nil }

// getLocked returns the live entry at k, deleting it if it has expired.
func (p *mapMutexKV) getLocked(k string) (mmEntry, bool) {
	e, ok := p.m[k]
	if ok && !alive(e.dl) {
		delete(p.m, k)
		return mmEntry{}, false
	}
	return e, ok
}

func (p *mapMutexKV) Get(k string) (string, bool) {
	p.mu.Lock()
	e, ok := p.getLocked(k)
	p.mu.Unlock()
	return e.v, ok
}

func (p *mapMutexKV) Set(k, v string) {
	p.mu.Lock()
	p.m[k] = mmEntry{v: v}
	p.mu.Unlock()
}

func (p *mapMutexKV) GetSet(k, v string) (string, bool) {
	p.mu.Lock()
	e, ok := p.getLocked(k)
	p.m[k] = mmEntry{v: v}
	p.mu.Unlock()
	return e.v, ok
}

func (p *mapMutexKV) SetNX(k, v string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.getLocked(k); ok {
		return false
	}
	p.m[k] = mmEntry{v: v}
	return true
}

func (p *mapMutexKV) SetNXPX(k, v string, ttl time.Duration) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := nowNano()
	if e, ok := p.m[k]; ok && (e.dl == 0 || now <= e.dl) {
		return false
	}
	p.m[k] = mmEntry{v: v, dl: now + int64(ttl)}
	return true
}

func (p *mapMutexKV) CompareAndDelete(k, v string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e, ok := p.getLocked(k); ok && e.v == v {
		delete(p.m, k)
		return true
	}
	return false
}

func (p *mapMutexKV) setMany(keys []string, v string) { setEach(p, keys, v) }
func (p *mapMutexKV) delMany(keys []string) {
	p.mu.Lock()
	for _, k := range keys {
		delete(p.m, k)
	}
	p.mu.Unlock()
}
func (p *mapMutexKV) Err() error { return nil }
func (p *mapMutexKV) Close()     {}

// ---- sync.Map ----

// syncMapKV keeps *mmEntry values: sync.Map's CompareAndSwap and
// CompareAndDelete compare the stored interface, so a pointer identifies one
// write and the conditional operations stay atomic.
type syncMapKV struct{ m sync.Map }

var _ kvStore = (*syncMapKV)(nil)

func newSyncMapKV() (kvStore, error) { return &syncMapKV{}, nil }

func (p *syncMapKV) load(k string) (*mmEntry, bool) {
	x, ok := p.m.Load(k)
	if !ok {
		return nil, false
	}
	e := x.(*mmEntry)
	return e, alive(e.dl)
}

func (p *syncMapKV) Get(k string) (string, bool) {
	if e, ok := p.load(k); ok {
		return e.v, true
	}
	return "", false
}

func (p *syncMapKV) Set(k, v string) { p.m.Store(k, &mmEntry{v: v}) }

func (p *syncMapKV) GetSet(k, v string) (string, bool) {
	x, ok := p.m.Swap(k, &mmEntry{v: v})
	if !ok {
		return "", false
	}
	e := x.(*mmEntry)
	if !alive(e.dl) {
		return "", false
	}
	return e.v, true
}

func (p *syncMapKV) setIfAbsent(k string, ne *mmEntry) bool {
	for {
		x, loaded := p.m.Load(k)
		if !loaded {
			if _, loaded = p.m.LoadOrStore(k, ne); !loaded {
				return true
			}
			continue
		}
		if alive(x.(*mmEntry).dl) {
			return false
		}
		if p.m.CompareAndSwap(k, x, ne) {
			return true
		}
	}
}

func (p *syncMapKV) SetNX(k, v string) bool {
	if _, ok := p.load(k); ok {
		return false
	}
	return p.setIfAbsent(k, &mmEntry{v: v})
}

func (p *syncMapKV) SetNXPX(k, v string, ttl time.Duration) bool {
	return p.setIfAbsent(k, &mmEntry{v: v, dl: nowNano() + int64(ttl)})
}

func (p *syncMapKV) CompareAndDelete(k, v string) bool {
	x, ok := p.m.Load(k)
	if !ok {
		return false
	}
	e := x.(*mmEntry)
	if e.v != v || !alive(e.dl) {
		return false
	}
	return p.m.CompareAndDelete(k, x)
}

func (p *syncMapKV) setMany(keys []string, v string) { setEach(p, keys, v) }
func (p *syncMapKV) delMany(keys []string) {
	for _, k := range keys {
		p.m.Delete(k)
	}
}
func (p *syncMapKV) Err() error { return nil }
func (p *syncMapKV) Close()     {}

// ---- xsync.Map v4 ----

// xsyncKV stores mmEntry values inline. SetNX and SetNXPX use Load then
// LoadOrStore (no closure on the common paths); replacing an expired entry
// and CompareAndDelete use Compute, xsync's only atomic read-modify-write.
type xsyncKV struct{ m *xsync.Map[string, mmEntry] }

var _ kvStore = (*xsyncKV)(nil)

func newXsyncKV() (kvStore, error) { return &xsyncKV{m: xsync.NewMap[string, mmEntry]()}, nil }

func (p *xsyncKV) Get(k string) (string, bool) {
	e, ok := p.m.Load(k)
	if ok && alive(e.dl) {
		return e.v, true
	}
	return "", false
}

func (p *xsyncKV) Set(k, v string) { p.m.Store(k, mmEntry{v: v}) }

func (p *xsyncKV) GetSet(k, v string) (string, bool) {
	e, ok := p.m.LoadAndStore(k, mmEntry{v: v})
	if ok && alive(e.dl) {
		return e.v, true
	}
	return "", false
}

func (p *xsyncKV) setIfAbsent(k string, ne mmEntry) bool {
	if e, ok := p.m.Load(k); ok && alive(e.dl) {
		return false
	}
	actual, loaded := p.m.LoadOrStore(k, ne)
	if !loaded {
		return true
	}
	if alive(actual.dl) {
		return false
	}
	wrote := false
	p.m.Compute(k, func(old mmEntry, loaded bool) (mmEntry, xsync.ComputeOp) {
		if loaded && alive(old.dl) {
			return old, xsync.CancelOp
		}
		wrote = true
		return ne, xsync.UpdateOp
	})
	return wrote
}

func (p *xsyncKV) SetNX(k, v string) bool { return p.setIfAbsent(k, mmEntry{v: v}) }
func (p *xsyncKV) SetNXPX(k, v string, ttl time.Duration) bool {
	return p.setIfAbsent(k, mmEntry{v: v, dl: nowNano() + int64(ttl)})
}

func (p *xsyncKV) CompareAndDelete(k, v string) bool {
	deleted := false
	p.m.Compute(k, func(old mmEntry, loaded bool) (mmEntry, xsync.ComputeOp) {
		if loaded && old.v == v && alive(old.dl) {
			deleted = true
			return old, xsync.DeleteOp
		}
		return old, xsync.CancelOp
	})
	return deleted
}

func (p *xsyncKV) setMany(keys []string, v string) { setEach(p, keys, v) }
func (p *xsyncKV) delMany(keys []string) {
	for _, k := range keys {
		p.m.Delete(k)
	}
}
func (p *xsyncKV) Err() error { return nil }
func (p *xsyncKV) Close()     {}

// ---- otter v2 ----

// otterVal carries the TTL of the write that stored it; the expiry
// calculator reads it, so each write sets (or, with ttl 0, clears) the
// entry's expiry as Redis SET does.
type otterVal struct {
	v   string
	ttl time.Duration // 0: no expiry
}

type otterExpiry struct{}

func (otterExpiry) ExpireAfterCreate(e otter.Entry[string, otterVal]) time.Duration {
	if e.Value.ttl > 0 {
		return e.Value.ttl
	}
	return farTTL
}

func (x otterExpiry) ExpireAfterUpdate(e otter.Entry[string, otterVal], _ otterVal) time.Duration {
	return x.ExpireAfterCreate(e)
}

func (otterExpiry) ExpireAfterRead(e otter.Entry[string, otterVal]) time.Duration {
	return e.ExpiresAfter()
}

// otterKV maps the operations to otter's API: GetIfPresent, Set (which
// returns the previous value: GETSET), SetIfAbsent (SETNX, SET NX PX with
// the TTL in the value), and Compute for CompareAndDelete (otter has no
// compare-and-delete; Compute locks the key's bucket, so it is atomic).
type otterKV struct {
	c *otter.Cache[string, otterVal]
}

var _ kvStore = (*otterKV)(nil)

func newOtterCache(withTTL bool, capacity int) *otter.Cache[string, otterVal] {
	o := &otter.Options[string, otterVal]{InitialCapacity: capacity}
	if withTTL {
		o.ExpiryCalculator = otterExpiry{}
	}
	return otter.Must(o)
}

func newOtterKV() (kvStore, error) { return &otterKV{c: newOtterCache(true, 0)}, nil }

func (p *otterKV) Get(k string) (string, bool) {
	v, ok := p.c.GetIfPresent(k)
	return v.v, ok
}
func (p *otterKV) Set(k, v string) { p.c.Set(k, otterVal{v: v}) }
func (p *otterKV) GetSet(k, v string) (string, bool) {
	old, inserted := p.c.Set(k, otterVal{v: v})
	if inserted {
		return "", false
	}
	return old.v, true
}
func (p *otterKV) SetNX(k, v string) bool {
	_, inserted := p.c.SetIfAbsent(k, otterVal{v: v})
	return inserted
}
func (p *otterKV) SetNXPX(k, v string, ttl time.Duration) bool {
	_, inserted := p.c.SetIfAbsent(k, otterVal{v: v, ttl: ttl})
	return inserted
}
func (p *otterKV) CompareAndDelete(k, v string) bool {
	deleted := false
	p.c.Compute(k, func(old otterVal, found bool) (otterVal, otter.ComputeOp) {
		if found && old.v == v {
			deleted = true
			return old, otter.InvalidateOp
		}
		return old, otter.CancelOp
	})
	return deleted
}
func (p *otterKV) setMany(keys []string, v string) { setEach(p, keys, v) }
func (p *otterKV) delMany(keys []string) {
	for _, k := range keys {
		p.c.Invalidate(k)
	}
}
func (p *otterKV) Err() error { return nil }
func (p *otterKV) Close()     { p.c.StopAllGoroutines() }

// ---- Redis (real or miniredis) through go-redis ----

// casDelScript is the classic compare-and-delete: Redis 7 has no DELEX.
var casDelScript = redis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`)

// redisKV sends one command per operation, as an application would.
type redisKV struct {
	c      *redis.Client
	ctx    context.Context
	errMu  sync.Mutex
	err    error // guarded by errMu: the first transport error
	failed atomic.Bool
}

var _ kvStore = (*redisKV)(nil)

func newRedisKV(addr string) func() (kvStore, error) {
	return func() (kvStore, error) { return dialRedisKV(addr, 8) }
}

// dialRedisKV connects with a pool of poolSize connections and loads the
// compare-and-delete script.
func dialRedisKV(addr string, poolSize int) (*redisKV, error) {
	c := newRedisClient(addr, poolSize)
	ctx := context.Background()
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("ping %s: %w", addr, err)
	}
	if err := casDelScript.Load(ctx, c).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("script load: %w", err)
	}
	return &redisKV{c: c, ctx: ctx}, nil
}

func (p *redisKV) fail(err error) {
	if err == nil || errors.Is(err, redis.Nil) || p.failed.Load() {
		return
	}
	p.errMu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.errMu.Unlock()
	p.failed.Store(true)
}

func (p *redisKV) Err() error {
	p.errMu.Lock()
	defer p.errMu.Unlock()
	return p.err
}

func (p *redisKV) Get(k string) (string, bool) {
	v, err := p.c.Get(p.ctx, k).Result()
	p.fail(err)
	return v, err == nil
}
func (p *redisKV) Set(k, v string) { p.fail(p.c.Set(p.ctx, k, v, 0).Err()) }
func (p *redisKV) GetSet(k, v string) (string, bool) {
	old, err := p.c.GetSet(p.ctx, k, v).Result()
	p.fail(err)
	return old, err == nil
}
func (p *redisKV) SetNX(k, v string) bool {
	ok, err := p.c.SetNX(p.ctx, k, v, 0).Result()
	p.fail(err)
	return ok
}
func (p *redisKV) SetNXPX(k, v string, ttl time.Duration) bool {
	ok, err := p.c.SetNX(p.ctx, k, v, ttl).Result()
	p.fail(err)
	return ok
}
func (p *redisKV) CompareAndDelete(k, v string) bool {
	n, err := casDelScript.EvalSha(p.ctx, p.c, []string{k}, v).Int()
	p.fail(err)
	return n == 1
}

func (p *redisKV) setMany(keys []string, v string) {
	for len(keys) > 0 {
		n := min(len(keys), 1000)
		pipe := p.c.Pipeline()
		for _, k := range keys[:n] {
			pipe.Set(p.ctx, k, v, 0)
		}
		_, err := pipe.Exec(p.ctx)
		p.fail(err)
		keys = keys[n:]
	}
}

func (p *redisKV) delMany(keys []string) { delRedisKeys(p.ctx, p.c, keys, p.fail) }

func (p *redisKV) Close() { _ = p.c.Close() }

// delRedisKeys deletes keys in pipelined batches.
func delRedisKeys(ctx context.Context, c *redis.Client, keys []string, fail func(error)) {
	for len(keys) > 0 {
		n := min(len(keys), 1000)
		fail(c.Del(ctx, keys[:n]...).Err())
		keys = keys[n:]
	}
}
