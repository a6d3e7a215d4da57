package engine

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// This file holds GetOrLoad: a read that, on a miss, loads the value once
// however many callers ask, and stores it.

// ErrLoadPanic is returned (wrapped, with the panic's value) to every
// caller waiting for a load whose function panicked or called
// runtime.Goexit. Nothing is stored.
var ErrLoadPanic = errors.New("engine: load function panicked")

// LoadFunc loads the value of key for GetOrLoad. ctx carries the values of
// the context of the call that started the load, and is done only when
// every caller waiting for the load has given up.
type LoadFunc func(ctx context.Context, key string) (string, error)

// flight is one load in progress, listed in its shard's loads while it
// runs and is waited for. The waiters wait for done, which finishLoad
// closes under the shard's loadMu after it stored the value and unlisted
// the flight; value and err are written before done is closed and read
// after.
type flight struct {
	done    chan struct{}
	value   string
	err     error
	waiters int                // callers waiting for done; guarded by the shard's loadMu
	cancel  context.CancelFunc // cancels the load's ctx
}

// GetOrLoad returns the value of key, as Get; if key is absent (or
// expired), it calls load once to get the value, stores it with ttl (0:
// no TTL) and returns it. It is safe for concurrent use, and it is the one
// engine call that waits: hence ctx.
//
// Concurrent callers for one key share one load: the first caller to miss
// starts load on a goroutine of its own, and every caller that misses
// while it runs waits for its result instead of loading again. So
// however many goroutines ask for a missing key at once, load runs once
// (and once more only after the value is gone again: deleted, expired or
// flushed). A caller that finds the key present returns at once, without
// waiting for any load in progress.
//
// The value is stored only if the key is still absent when load returns,
// in one critical section that also ends the load: a write of the key
// during the load wins, and every waiter gets the value written, the one
// a Get would now return. A delete or an expiry during the load changes
// nothing, since the key was absent already: the loaded value is stored
// all the same, so a delete meant to invalidate a value that was being
// loaded from a source that changed meanwhile does not stop the old value
// from being stored (give it a TTL). The TTL counts from the store, not
// from the call. The store reports what SetWith with IfAbsent and the TTL
// reports (KindNew, KindSet, and KindExpire with a TTL), once per load.
//
// If load returns an error, every waiter gets that error, nothing is
// stored, and the next call loads again. A load that panics (or calls
// runtime.Goexit) is an error matching ErrLoadPanic for every waiter; the
// panic does not spread.
//
// ctx bounds the wait of this caller only: when it is done, GetOrLoad
// returns ctx.Err() and the load goes on for the other waiters. When every
// waiter has given up, the load's own context (which carries the first
// caller's values, not its cancellation) is cancelled and its result
// discarded; the next call starts a new load. A ctx already done returns
// ctx.Err() unless the key is present. A ttl < 0 returns ErrInvalidTTL
// before anything else; a deadline beyond the engine's range is
// ErrInvalidTTL for every waiter when the value is stored, and a bounded
// engine that cannot admit the store (see "Memory bound" in the package
// doc) gives every waiter ErrOOM; the value is then not stored.
func (e *Engine) GetOrLoad(ctx context.Context, key string, ttl time.Duration, load LoadFunc) (string, error) {
	if ttl < 0 {
		return "", ErrInvalidTTL
	}
	if v, ok := e.Get(key); ok {
		return v, nil
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	h := e.m.Hash(key)
	s, _ := e.m.Shard(h)
	st := &s.Aux
	st.loadMu.Lock()
	f := st.loads[key]
	if f == nil {
		// A load that ended stored its value before it was unlisted:
		// look again, so a miss just before the store loads nothing.
		if v, ok := e.Get(key); ok {
			st.loadMu.Unlock()
			return v, nil
		}
		lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		f = &flight{done: make(chan struct{}), cancel: cancel}
		if st.loads == nil {
			st.loads = make(map[string]*flight)
		}
		st.loads[key] = f
		go e.runLoad(lctx, s, h, key, ttl, f, load)
	}
	f.waiters++
	st.loadMu.Unlock()
	select {
	case <-f.done:
		return f.value, f.err
	case <-ctx.Done():
	}
	st.loadMu.Lock()
	defer st.loadMu.Unlock()
	select {
	case <-f.done: // it ended while this caller gave up: take the result
		return f.value, f.err
	default:
	}
	if f.waiters--; f.waiters == 0 {
		endLoadLocked(st, key) // abandoned
		f.cancel()
	}
	return "", ctx.Err()
}

// runLoad runs load for the flight f, on a goroutine of its own, and then
// stores its result and wakes the waiters (finishLoad), whatever load does:
// returns, panics or exits the goroutine.
func (e *Engine) runLoad(ctx context.Context, s *shardT, h uint64, key string, ttl time.Duration, f *flight, load LoadFunc) {
	v, err := "", fmt.Errorf("%w: the load function called runtime.Goexit", ErrLoadPanic)
	defer func() {
		if r := recover(); r != nil {
			v, err = "", fmt.Errorf("%w: %v", ErrLoadPanic, r)
		}
		e.finishLoad(s, h, key, ttl, f, v, err)
	}()
	v, err = load(ctx, key)
}

// finishLoad ends the flight f with load's result: unless every waiter
// gave up (the flight was abandoned), it stores v under key if key is
// still absent, takes the value a write during the load left instead,
// unlists the flight and wakes the waiters.
func (e *Engine) finishLoad(s *shardT, h uint64, key string, ttl time.Duration, f *flight, v string, err error) {
	defer f.cancel()
	st := &s.Aux
	st.loadMu.Lock()
	defer st.loadMu.Unlock()
	if st.loads[key] != f {
		return // abandoned: nobody waits, and a new load may be under way
	}
	if err == nil && e.full() {
		err = e.admit() // no shard lock held: loadMu comes first
	}
	if err == nil {
		var c opState
		e.begin(&c)
		args := SetArgs{Cond: IfAbsent, TTL: ttl}
		s.Lock()
		res, serr := e.setWithLocked(s, h, key, v, &args, noDeadline, &c)
		s.Unlock()
		switch {
		case serr != nil:
			err = serr
		case !res.Written:
			v = res.Old // a write during the load wins
		}
	}
	if err != nil {
		v = ""
	}
	endLoadLocked(st, key)
	f.value, f.err = v, err
	close(f.done) // under loadMu: a waiter that gives up sees it or the flight
}

// endLoadLocked forgets key's flight, so the next miss starts a new load.
// The caller holds st.loadMu.
func endLoadLocked(st *shardState, key string) {
	delete(st.loads, key)
	if len(st.loads) == 0 {
		st.loads = nil
	}
}
