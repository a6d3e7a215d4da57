package main

import (
	"context"
	"time"

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
