package main

import (
	"context"
	"sync"
	"time"

	"github.com/nxkv/nxkv/internal/lockkeys"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/goredis"
	"github.com/nxkv/nxkv/lockapi/inproc"
)

// inprocWindow is the retry strategy's window for the in-process client:
// waiters are woken by the engine's Watch, so the window only bounds how
// long a waiter trusts the watch before trying once more on its own.
const inprocWindow = 100 * time.Millisecond

// nxkvInprocLockPeer is nxkv's lockapi over the in-process engine, with the
// defaults a user gets (fencing tokens on), or with FIFO waiters, or without
// fencing (to show what the fencing counter costs).
func nxkvInprocLockPeer(variant string) lockPeer {
	name := "nxkv lockapi (in-process)"
	var copts lockapi.Options
	var bopts inproc.Options
	switch variant {
	case "fifo":
		name = "nxkv lockapi (in-process, FIFO)"
		copts.FIFO = true
	case "nofence":
		name = "nxkv lockapi (in-process, NoFencing)"
		bopts.NoFencing = true
	}
	return lockPeer{Name: name, Setup: func() (*lockEnv, error) {
		e, err := newEngine()
		if err != nil {
			return nil, err
		}
		c := lockapi.New(inproc.New(e, bopts), copts)
		opts := &lockapi.ObtainOptions{Retry: lockapi.LinearBackoff(inprocWindow)}
		return &lockEnv{
			newLocker: func(key string) locker { return &nxkvLocker{c: c, key: key, opts: opts} },
			reset:     func(key string) { e.Del(key) },
			close:     func() { _ = e.Close() },
		}, nil
	}}
}

// nxkvRedisLockPeer is nxkv's lockapi over go-redis (lockapi/goredis, with
// its default fencing counter), polling every 1 ms like the other Redis
// clients.
func nxkvRedisLockPeer(t *target) lockPeer {
	return lockPeer{Name: t.Name + " nxkv lockapi", Network: true, Setup: func() (*lockEnv, error) {
		rc, err := redisClientFor(t)
		if err != nil {
			return nil, err
		}
		c := lockapi.New(goredis.New(rc, goredis.Options{}), lockapi.Options{})
		opts := &lockapi.ObtainOptions{Retry: lockapi.LinearBackoff(pollDelay)}
		return &lockEnv{
			newLocker: func(key string) locker { return &nxkvLocker{c: c, key: key, opts: opts} },
			reset: func(key string) {
				// The fencing counter too, so -redis servers are left clean.
				rc.Del(context.Background(), key, goredis.FenceKey(key))
			},
			close: func() { _ = rc.Close() },
		}, nil
	}}
}

type nxkvLocker struct {
	c    *lockapi.Client
	key  string
	opts *lockapi.ObtainOptions
	l    *lockapi.Lock
}

func (l *nxkvLocker) lock(ctx context.Context) error {
	lk, err := l.c.Obtain(ctx, l.key, lockTTL, l.opts)
	if err != nil {
		return err
	}
	l.l = lk
	return nil
}

func (l *nxkvLocker) unlock(ctx context.Context) error { return l.l.Release(ctx) }

// primitive is one of nxkv's kinds of lock beyond the mutex, as a locker
// for the uncontended lock cycle: obtain takes the key's lease; derived
// lists the backend keys the lease leaves behind (counters, lists), for
// cleaning a Redis server.
type primitive struct {
	name    string
	obtain  func(ctx context.Context, c *lockapi.Client, key string) (*lockapi.Lock, error)
	derived func(key string) []string
}

// primitives are the kinds measured beside the mutex: a semaphore of 4, a
// read and a write lease of an RWMutex, a multi-key lock over two keys and
// a reentrant lock's first hold.
var primitives = []primitive{
	{"semaphore of 4", func(ctx context.Context, c *lockapi.Client, key string) (*lockapi.Lock, error) {
		return c.Semaphore(key, 4).Obtain(ctx, lockTTL, nil)
	}, func(key string) []string { return []string{lockkeys.NewSemaphore(key).Fence()} }},
	{"RWMutex read", func(ctx context.Context, c *lockapi.Client, key string) (*lockapi.Lock, error) {
		return c.RWMutex(key).ObtainRead(ctx, lockTTL, nil)
	}, rwDerived},
	{"RWMutex write", func(ctx context.Context, c *lockapi.Client, key string) (*lockapi.Lock, error) {
		return c.RWMutex(key).ObtainWrite(ctx, lockTTL, nil)
	}, rwDerived},
	{"ObtainAll, 2 keys", func(ctx context.Context, c *lockapi.Client, key string) (*lockapi.Lock, error) {
		return c.ObtainAll(ctx, multiKeys(key), lockTTL, nil)
	}, func(key string) []string {
		ks := multiKeys(key)
		return []string{goredis.FenceKey(ks[0]), goredis.FenceKey(ks[1])}
	}},
	{"reentrant", func(ctx context.Context, c *lockapi.Client, key string) (*lockapi.Lock, error) {
		return c.Obtain(ctx, key, lockTTL, &lockapi.ObtainOptions{Reentrant: true})
	}, func(key string) []string { return []string{goredis.FenceKey(key)} }},
}

func rwDerived(key string) []string {
	lk := lockkeys.NewRW(key)
	return []string{lk.Counter(), lk.Readers()}
}

// multiKeys are the two keys of a multi-key lock named after key, sharing
// a hash tag.
func multiKeys(key string) []string { return []string{"{" + key + "}:a", "{" + key + "}:b"} }

// nxkvPrimitivePeers are nxkv's other kinds of lock over the in-process
// engine, measured uncontended beside its mutex.
func nxkvPrimitivePeers() []lockPeer {
	var ps []lockPeer
	for _, p := range primitives {
		ps = append(ps, lockPeer{Name: "nxkv " + p.name + " (in-process)", UncontendedOnly: true, Setup: func() (*lockEnv, error) {
			e, err := newEngine()
			if err != nil {
				return nil, err
			}
			c := lockapi.New(inproc.New(e, inproc.Options{}), lockapi.Options{})
			return &lockEnv{
				newLocker: func(key string) locker { return &primLocker{c: c, key: key, p: p} },
				reset:     func(string) {},
				close:     func() { _ = e.Close() },
			}, nil
		}})
	}
	return ps
}

// nxkvRedisPrimitivePeers are the same over a Redis target through
// lockapi/goredis; close deletes the counters and lists the leases left.
func nxkvRedisPrimitivePeers(t *target) []lockPeer {
	var ps []lockPeer
	for _, p := range primitives {
		ps = append(ps, lockPeer{Name: t.Name + " nxkv " + p.name, Network: true, UncontendedOnly: true, Setup: func() (*lockEnv, error) {
			rc, err := redisClientFor(t)
			if err != nil {
				return nil, err
			}
			c := lockapi.New(goredis.New(rc, goredis.Options{}), lockapi.Options{})
			var mu sync.Mutex
			var used []string // guarded by mu
			return &lockEnv{
				newLocker: func(key string) locker {
					mu.Lock()
					used = append(used, key)
					mu.Unlock()
					return &primLocker{c: c, key: key, p: p}
				},
				reset: func(string) {},
				close: func() {
					mu.Lock()
					defer mu.Unlock()
					for _, k := range used {
						rc.Del(context.Background(), p.derived(k)...)
					}
					_ = rc.Close()
				},
			}, nil
		}})
	}
	return ps
}

type primLocker struct {
	c   *lockapi.Client
	key string
	p   primitive
	l   *lockapi.Lock
}

func (l *primLocker) lock(ctx context.Context) error {
	lk, err := l.p.obtain(ctx, l.c, l.key)
	if err != nil {
		return err
	}
	l.l = lk
	return nil
}

func (l *primLocker) unlock(ctx context.Context) error { return l.l.Release(ctx) }
