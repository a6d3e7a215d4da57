package locktest_test

import (
	"context"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/internal/lockkeys"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/inproc"
	"github.com/nxkv/nxkv/lockapi/locktest"
)

// flawed is the in-process backend with one planted flaw in a primitive,
// for TestPlanted: the suite must fail on each.
type flawed struct {
	*inproc.Backend
	flaw    string
	counted *countedHolds  // for "reentrant-holds-counted"
	e       *engine.Engine // the Backend's, for "sem-rw-fences-restart"
}

// plainFence is the fence of a semaphore or read-write lock counted as they
// once were, in a key that nothing protects: a flush deletes it and the
// count starts again at 1.
func (f flawed) plainFence(kind, name string, fence int64, ok bool) int64 {
	if f.flaw != "sem-rw-fences-restart" || !ok {
		return fence
	}
	n, _ := f.e.IncrBy("plain-counter:"+kind+":"+name, 1)
	return n
}

// countedHolds makes reentrant holds anonymous, as a backend that counts
// holds instead of naming them: each hold gets a fresh ID, and a release
// removes the newest hold of the key, whichever hold it names.
type countedHolds struct {
	mu  sync.Mutex
	n   int
	ids map[string][]string // key -> the IDs of its holds, oldest first
}

func (c *countedHolds) add(key string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	id := "h" + strconv.Itoa(c.n)
	c.ids[key] = append(c.ids[key], id)
	return id
}

func (c *countedHolds) newest(key string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := c.ids[key]
	if len(ids) == 0 {
		return "none"
	}
	c.ids[key] = ids[:len(ids)-1]
	return ids[len(ids)-1]
}

func (f flawed) AcquireReentrant(ctx context.Context, key, value, hold string, ttl time.Duration) (int64, int, bool, error) {
	if f.flaw == "reentrant-holds-counted" && lockkeys.ValidHold(hold) {
		hold = f.counted.add(key)
	}
	return f.Backend.AcquireReentrant(ctx, key, value, hold, ttl)
}

func (f flawed) AcquireSlot(ctx context.Context, name string, limit int, value string, ttl time.Duration) (string, int64, bool, error) {
	if f.flaw == "sem-one-too-many" {
		limit++
	}
	key, fence, ok, err := f.Backend.AcquireSlot(ctx, name, limit, value, ttl)
	return key, f.plainFence("sem", name, fence, ok), ok, err
}

func (f flawed) SlotKey(name string, i int) string {
	if f.flaw == "sem-watches-one-slot" {
		i = 0
	}
	return f.Backend.SlotKey(name, i)
}

func (f flawed) AcquireRead(ctx context.Context, name, value string, ttl time.Duration) (string, int64, bool, error) {
	if f.flaw == "rw-readers-apart" {
		name += "'" // readers lock another lock than writers
	}
	key, fence, ok, err := f.Backend.AcquireRead(ctx, name, value, ttl)
	return key, f.plainFence("rw", name, fence, ok), ok, err
}

func (f flawed) AcquireWrite(ctx context.Context, name, value string, ttl time.Duration, queue bool) (string, int64, bool, error) {
	if f.flaw == "rw-no-mark" {
		queue = false
	}
	key, fence, ok, err := f.Backend.AcquireWrite(ctx, name, value, ttl, queue)
	return key, f.plainFence("rw", name, fence, ok), ok, err
}

func (f flawed) Abandon(ctx context.Context, name, value string) error {
	if f.flaw == "rw-mark-kept" {
		return nil
	}
	return f.Backend.Abandon(ctx, name, value)
}

func (f flawed) AcquireAll(ctx context.Context, keys []string, value string, ttl time.Duration) ([]int64, int, bool, error) {
	if f.flaw == "multi-racy" {
		// Key by key, giving back what it got when a key is held: all or
		// nothing in the end, but not atomic.
		for i, k := range keys {
			_, ok, err := f.Backend.Acquire(ctx, k, value, ttl)
			runtime.Gosched()
			if err != nil || !ok {
				for _, taken := range keys[:i] {
					f.Backend.Release(ctx, taken, value)
				}
				return nil, i, false, err
			}
		}
		return make([]int64, len(keys)), 0, true, nil
	}
	if f.flaw != "multi-one-by-one" {
		return f.Backend.AcquireAll(ctx, keys, value, ttl)
	}
	// Key by key, keeping what it got when a key is held.
	fences := make([]int64, len(keys))
	for i, k := range keys {
		fence, ok, err := f.Backend.Acquire(ctx, k, value, ttl)
		if err != nil || !ok {
			return nil, i, false, err
		}
		fences[i] = fence
	}
	return fences, 0, true, nil
}

func (f flawed) RefreshAll(ctx context.Context, keys []string, value string, ttl time.Duration) (bool, error) {
	if f.flaw != "multi-refresh-some" {
		return f.Backend.RefreshAll(ctx, keys, value, ttl)
	}
	all := true
	for _, k := range keys {
		ok, err := f.Backend.Refresh(ctx, k, value, ttl)
		if err != nil {
			return false, err
		}
		all = all && ok
	}
	return all, nil
}

func (f flawed) ReleaseReentrant(ctx context.Context, key, value, hold string) (int, bool, error) {
	if f.flaw == "reentrant-holds-counted" && lockkeys.ValidHold(hold) {
		hold = f.counted.newest(key)
	}
	if f.flaw == "reentrant-first-release-frees" {
		ok, err := f.Backend.Release(ctx, key, value)
		return 0, ok, err
	}
	return f.Backend.ReleaseReentrant(ctx, key, value, hold)
}

func (f flawed) RefreshReentrant(ctx context.Context, key, value, hold string, ttl time.Duration) (bool, error) {
	if f.flaw == "reentrant-refresh-shortens" {
		return f.Backend.Refresh(ctx, key, value, ttl)
	}
	ok, err := f.Backend.RefreshReentrant(ctx, key, value, hold, ttl)
	if f.flaw == "reentrant-stale-refresh" && err == nil && !ok {
		// Judge by the value alone, as if every hold of the owner were one:
		// a hold of an earlier lease refreshes the later one.
		d, held, _ := f.Backend.PTTL(ctx, key, value)
		if held && d < ttl {
			return f.Backend.Refresh(ctx, key, value, ttl)
		}
		return held, nil
	}
	return ok, err
}

var (
	_ lockapi.SemaphoreBackend = flawed{}
	_ lockapi.RWBackend        = flawed{}
	_ lockapi.MultiBackend     = flawed{}
	_ lockapi.ReentrantBackend = flawed{}
	_ lockapi.Watcher          = flawed{}
)

// flawedEnv runs the suite over the in-process backend with flaw planted.
func flawedEnv(flaw string) func(t *testing.T) locktest.Env {
	return func(t *testing.T) locktest.Env {
		c := clock.NewMock()
		c.Set(locktest.Epoch)
		e := engine.New(engine.Options{Clock: c})
		t.Cleanup(func() { e.Close() })
		return locktest.Env{
			Backend: flawed{inproc.New(e, inproc.Options{}), flaw, &countedHolds{ids: map[string][]string{}}, e},
			Clock:   c,
			Advance: func(d time.Duration) { c.Add(d); e.Reap() },
			Fencing: true,
			Flush:   e.FlushAll,
			Instant: true,
		}
	}
}

// TestFlawlessWrapper runs the suite over the wrapper with no flaw, so the
// planted-flaw failures below are the flaws' doing.
func TestFlawlessWrapper(t *testing.T) { locktest.Run(t, flawedEnv("")) }
