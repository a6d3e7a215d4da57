package goredis_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/redis/go-redis/v9"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/goredis"
	"github.com/nxkv/nxkv/lockapi/inproc"
	"github.com/nxkv/nxkv/lockapi/locktest"
	"github.com/nxkv/nxkv/resp"
)

// nxkvServer serves an engine on a fake clock over the Redis protocol and
// returns a go-redis client reaching it through the in-memory dialer.
func nxkvServer(t *testing.T) (*engine.Engine, *clock.Mock, *redis.Client) {
	t.Helper()
	clk := clock.NewMock()
	clk.Set(locktest.Epoch)
	e := engine.New(engine.Options{Clock: clk})
	t.Cleanup(func() { e.Close() })
	s := resp.NewT(t, resp.Options{Engine: e})
	c := redis.NewClient(&redis.Options{Dialer: s.Dial, DisableIdentity: true})
	t.Cleanup(func() { c.Close() })
	return e, clk, c
}

// TestConformanceNxkvServer runs the conformance suite, primitives
// included, over the Redis backend talking to nxkv's own Redis-protocol
// server: the scripts use only strings, TTLs and commands it implements.
// Time is the engine's fake clock.
func TestConformanceNxkvServer(t *testing.T) {
	for _, v := range []struct {
		name    string
		opts    goredis.Options
		fencing bool
	}{
		{"scripts", goredis.Options{Native: goredis.NativeOff}, true},
		{"native", goredis.Options{Native: goredis.NativeOn}, true},
		{"nofence", goredis.Options{NoFencing: true}, false},
	} {
		t.Run(v.name, func(t *testing.T) {
			locktest.Run(t, func(t *testing.T) locktest.Env {
				e, clk, c := nxkvServer(t)
				return locktest.Env{
					Backend: goredis.New(c, v.opts),
					Advance: func(d time.Duration) { clk.Add(d); e.Reap() },
					Fencing: v.fencing,
					// The engine's reserved counters never repeat, so over
					// nxkv-server (unlike Redis) FLUSHALL restarts no fence.
					Flush: func() {
						if err := c.FlushAll(context.Background()).Err(); err != nil {
							t.Fatalf("FLUSHALL: %v", err)
						}
					},
				}
			})
		})
	}
}

// TestPrimitivesShareKeys: the Redis and in-process backends lay
// primitives out alike, so over one engine (served by nxkv-server) a
// semaphore, a read-write lock and a reentrant lock are the same whichever
// backend takes them.
func TestPrimitivesShareKeys(t *testing.T) {
	e, _, c := nxkvServer(t)
	remote := lockapi.New(goredis.New(c, goredis.Options{}), lockapi.Options{})
	local := lockapi.New(inproc.New(e, inproc.Options{}), lockapi.Options{})
	ctx := context.Background()
	busy := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, lockapi.ErrNotObtained) {
			t.Fatalf("%s = %v, want ErrNotObtained", what, err)
		}
	}

	r1, err1 := remote.Semaphore("pool", 2).Obtain(ctx, time.Minute, nil)
	l1, err2 := local.Semaphore("pool", 2).Obtain(ctx, time.Minute, nil)
	if err1 != nil || err2 != nil {
		t.Fatalf("semaphore leases: %v, %v", err1, err2)
	}
	_, err := remote.Semaphore("pool", 2).Obtain(ctx, time.Minute, nil)
	busy("a third lease over Redis", err)
	_, err = local.Semaphore("pool", 2).Obtain(ctx, time.Minute, nil)
	busy("a third lease in process", err)
	if f1, _ := r1.Fence(); func() bool { f2, _ := l1.Fence(); return f2 <= f1 }() {
		t.Fatalf("fences %v then %v: not one counter", r1.Fences(), l1.Fences())
	}
	r1.Release(ctx)
	l1.Release(ctx)

	rd, err := remote.RWMutex("doc").ObtainRead(ctx, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = local.RWMutex("doc").ObtainWrite(ctx, time.Minute, nil)
	busy("an in-process writer beside a reader over Redis", err)
	rd.Release(ctx)
	w, err := local.RWMutex("doc").ObtainWrite(ctx, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = remote.RWMutex("doc").ObtainRead(ctx, time.Minute, nil)
	busy("a reader over Redis beside an in-process writer", err)
	w.Release(ctx)

	h1, err := local.Obtain(ctx, "cart", time.Minute, &lockapi.ObtainOptions{Reentrant: true})
	if err != nil {
		t.Fatal(err)
	}
	h2, err := remote.Obtain(ctx, "cart", time.Minute, &lockapi.ObtainOptions{Reentrant: true, Token: h1.Token()})
	if err != nil || h2.Holds() != 2 {
		t.Fatalf("re-entry over Redis of an in-process hold = %v, holds %d, want 2", err, h2.Holds())
	}
	h1.Release(ctx)
	h2.Release(ctx)
	if n := e.LenAll(); n > 4 {
		t.Fatalf("the engine keeps %d keys after every lease was released, want only counters and lists", n)
	}
}

// TestServerSeesReservedKeys: over the Redis protocol the lock bookkeeping
// is made of keys like any other, as Redis would show a lock client's
// keys: DBSIZE counts them, KEYS and SCAN list them and FLUSHALL deletes
// them; the engine's own Len and Flush leave them out. Fences survive the
// FLUSHALL.
func TestServerSeesReservedKeys(t *testing.T) {
	e, _, c := nxkvServer(t)
	ctx := context.Background()
	local := lockapi.New(inproc.New(e, inproc.Options{}), lockapi.Options{})
	lease, err := local.Semaphore("pool", 2).Obtain(ctx, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := lease.Fence()
	c.Set(ctx, "cache:1", "v", 0)
	if n, _ := c.DBSize(ctx).Result(); n != 3 || e.Len() != 1 || e.LenAll() != 3 {
		t.Fatalf("DBSIZE = %d, Len %d, LenAll %d; want 3 (the key, a slot, the counter), 1, 3", n, e.Len(), e.LenAll())
	}
	keys, _ := c.Keys(ctx, "nxkv:sem:*").Result()
	scanned, _, _ := c.Scan(ctx, 0, "nxkv:*", 1000).Result()
	if len(keys) != 2 || len(scanned) != 2 {
		t.Fatalf("KEYS nxkv:sem:* = %q, SCAN MATCH nxkv:* = %q; want the slot and the counter", keys, scanned)
	}
	e.Flush()
	if n, _ := c.DBSize(ctx).Result(); n != 2 {
		t.Fatalf("DBSIZE after the engine's Flush = %d, want 2: the lease and its counter stay", n)
	}
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lease.Lost():
	default:
		t.Fatal("FLUSHALL did not end the semaphore lease")
	}
	if n := e.LenAll(); n != 0 {
		t.Fatalf("LenAll after FLUSHALL = %d, want 0", n)
	}
	next, err := local.Semaphore("pool", 2).Obtain(ctx, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := next.Fence(); f <= before {
		t.Fatalf("fence after FLUSHALL = %d, want > %d", f, before)
	}
}
