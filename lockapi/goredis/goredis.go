// Package goredis is a lockapi.Backend over a Redis server reached through
// go-redis v9 (github.com/redis/go-redis/v9): a single node, a Sentinel
// failover group or a Cluster, anything that satisfies redis.UniversalClient.
//
// # Model
//
// A lock is one Redis string key holding the holder's unique value with a
// PX deadline: the single-instance pattern of the Redis SET page. Every
// Backend call is exactly one round trip and atomic on the server:
//
//   - Acquire runs a script doing SET key value NX PX ttl and, only when that
//     succeeds, INCR of the key's fencing counter, returning the counter as
//     the fencing token. The counter has no TTL and survives releases and
//     expiries, so tokens for a key strictly increase for as long as the
//     server keeps its data (a server restarted without persistence, or a
//     failover to a replica that missed the INCR, can repeat tokens).
//   - Release is compare-and-delete (GET == value then DEL), Refresh is
//     compare-and-pexpire (GET == value then PEXPIRE) and PTTL is GET ==
//     value then PTTL, each a script, or on Redis 8.4 and later the native
//     DELEX key IFEQ value and SET key value IFEQ value PX ttl (see Native).
//
// # Semaphores, read-write locks, multi-key and reentrant locks
//
// Backend implements every lockapi primitive, each call one script (one
// round trip) using only strings, TTLs and commands nxkv's own
// Redis-protocol server implements, so the same code runs against Redis
// and nxkv-server; the key layout is the in-process backend's. Every key of
// one semaphore, read-write lock or reentrant lock carries the name's hash
// tag (the name's own, or one chosen to hash to the name's slot), so each
// script stays in one Cluster slot whatever the name. A multi-key lock's
// keys are the caller's: on a Cluster they must share a slot (a common
// hash tag), which Backend checks before sending (ErrCrossSlot). Reader
// keys of a read-write lock are built inside its scripts from ids listed
// in a key of the lock; they carry the lock's hash tag, so they lie in the
// slot of the keys the script declares. A semaphore's and a read-write
// lock's counter (fences and reader ids) and the lock's reader list have no
// TTL and stay once every lease is gone, like the fencing counters: a few
// dozen bytes per name, under the reserved prefix.
//
// Scripts are sent with EVALSHA and fall back to EVAL when the server
// replies NOSCRIPT (a restarted server or SCRIPT FLUSH); only that first call
// after a flush costs a second round trip.
//
// # Fencing counter key and Cluster hash slots
//
// In a Cluster both keys a script touches must live in one hash slot, so
// each lock key's counter is named, by FenceKey, inside the key's slot:
// "nxkv:fence:{"+tag+"}"+key, where tag is the key's own hash tag when it
// has one (the bytes between its first "{" and the first "}" after it, when
// not empty) and otherwise a short tag chosen to hash to the key's own slot.
// So every key works, including keys with "{" or "}" ("job}x"), the same way
// on one node and on a Cluster, and distinct keys have distinct counters.
// Counters live under "nxkv:", the prefix lockapi reserves: lockapi refuses
// lock keys there, and nothing else should write there. NoFencing drops the
// counter (SET NX PX only, fence 0).
//
// Redis offers nothing but a key to keep a counter in, so what resets a
// key's counter, and then repeats fencing tokens, is anything that loses
// or deletes that key: a DEL of the counter, a FLUSHDB or FLUSHALL, a
// restart without persistence, or a failover to a replica that had not
// received the latest INCR. After a FLUSHALL every counter is gone: the
// next Acquire of each key (and of each semaphore and read-write lock)
// gets token 1 again, while a holder from before the flush may still act
// on a larger or equal token, and the leases themselves are gone too, so
// a new holder may be admitted beside an old one. A protected resource
// that remembers the largest token it accepted per key then refuses the
// new holders until their tokens pass it (safe, but stuck), or, if it
// accepts equal tokens, accepts a stale writer. To recover: wait out the
// longest TTL any holder may use, so that no lease from before the flush
// is still acted on; then set each counter (FenceKey(key), or the
// semaphore's and read-write lock's counters under "nxkv:sem:" and
// "nxkv:rw:") above the largest token the resources accepted, with SET,
// before taking locks again; or use lock names never used before. Served
// by nxkv-server instead of Redis, the counters survive all of this: its
// engine never lets a counter under "nxkv:" repeat a value, so FLUSHALL
// and DEL restart no token (a restart of the process still does). The
// in-process backend's tokens never repeat either.
//
// # Time
//
// TTLs must be in [lockapi.MinTTL, lockapi.MaxTTL]. They travel as PX
// milliseconds, rounded up, so the server never holds a lock for less than
// the caller asked; PTTL reports whole milliseconds. The
// deadline is the server's clock plus the TTL, as in Redis.
//
// The tests run the lockapi conformance suite against a real redis-server
// and exercise a Sentinel failover client and a one-node Cluster.
//
// # Errors
//
// Holding and not holding are answers, reported through ok. Everything else
// (network failures, a closed client, a cancelled ctx, server errors such as
// WRONGTYPE) is returned as an *OpError wrapping the cause, so
// errors.Is(err, context.DeadlineExceeded), errors.Is(err, redis.ErrClosed)
// and errors.As(err, new(*net.OpError)) work. A TTL out of range returns
// ErrInvalidTTL and sends nothing; every key is accepted.
//
// After an error the outcome is unknown: the command may have run on the
// server and only its reply been lost. Release and Refresh are safe to
// retry, because they compare the value first and so never touch a lock
// another holder took meanwhile; after a failed Acquire, a Release with the
// same value removes the lock if it was stored (lockapi.Client does this).
// go-redis itself retries a command after some network errors (MaxRetries,
// 3 by default). If the first attempt ran and only its reply was lost, the
// retry sees the first attempt's effect: Acquire then reports ok false while
// the key holds the caller's value until its TTL (a stranded lock, never a
// shared one), and Release reports ok false although it deleted the key.
// Set MaxRetries to -1 on the client to see such failures as errors instead.
package goredis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/nxkv/nxkv/lockapi"
)

var (
	_ lockapi.Backend          = (*Backend)(nil)
	_ lockapi.SemaphoreBackend = (*Backend)(nil)
	_ lockapi.RWBackend        = (*Backend)(nil)
	_ lockapi.MultiBackend     = (*Backend)(nil)
	_ lockapi.ReentrantBackend = (*Backend)(nil)
)

// ErrInvalidTTL is returned for a TTL outside [lockapi.MinTTL,
// lockapi.MaxTTL]; it wraps lockapi.ErrInvalidTTL. Nothing is sent.
var ErrInvalidTTL = fmt.Errorf("goredis: %w", lockapi.ErrInvalidTTL)

// OpError is a transport or server failure of one Backend call. The outcome
// on the server is unknown (see the package doc). It unwraps to the go-redis
// or context error. Its message names the operation, not the key, which the
// caller (lockapi's error) already names.
type OpError struct {
	Op  string // "acquire", "release", "refresh", "pttl" or "abandon"
	Key string
	Err error
}

// Error implements error.
func (e *OpError) Error() string {
	return "goredis: " + e.Op + ": " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *OpError) Unwrap() error { return e.Err }

// errBadReply is the error of a script reply of an unexpected shape (a
// server that is not Redis, or a script cache holding another script).
var errBadReply = errors.New("unexpected script reply")

// opError returns the *OpError of a failed script call: err, or, when the
// call succeeded with a reply of the wrong shape, errBadReply.
func opError(op, key string, err error, reply []int64) *OpError {
	if err == nil {
		err = fmt.Errorf("%w %v", errBadReply, reply)
	}
	return &OpError{Op: op, Key: key, Err: err}
}

// Native selects whether Release and Refresh use the Redis 8.4 commands
// DELEX key IFEQ value and SET key value IFEQ value PX ttl instead of
// scripts. Acquire and PTTL always use scripts: no single native command
// does SET NX plus INCR, or GET-compare plus PTTL.
type Native uint8

const (
	// NativeAuto asks the server its version (INFO server) once, on the
	// first Release or Refresh, and uses the native commands only on 8.4 or
	// later. A failed probe selects scripts for good.
	NativeAuto Native = iota
	// NativeOff always uses scripts.
	NativeOff
	// NativeOn uses the native commands without probing. If the server
	// rejects them (unknown command or syntax error, as before 8.4), the
	// Backend switches to scripts for good and retries the call with a
	// script; the rejected command changed nothing.
	NativeOn
)

// Options configures a Backend. The zero value selects every default.
type Options struct {
	// Native sets how native Redis 8.4 commands are used; the zero value is
	// NativeAuto.
	Native Native
	// NoFencing makes Acquire a script doing only SET key value NX PX ttl:
	// it returns fence 0 and keeps no counter key.
	NoFencing bool
}

// Backend is a lockapi.Backend over a go-redis client. It is safe for
// concurrent use. It does not own the client: closing the client is the
// caller's job, and Backend has no Close.
type Backend struct {
	c       redis.UniversalClient
	native  Native // set by New, read-only afterwards
	noFence bool   // set by New, read-only afterwards

	// mode is what Release and Refresh currently use (a mode); it only
	// moves from modeUnknown to one of the others, or from modeNative to
	// modeScripts. probeMu serialises the NativeAuto probe.
	mode    atomic.Uint32
	probeMu sync.Mutex
}

type mode = uint32

const (
	modeUnknown mode = iota // NativeAuto before the probe
	modeScripts
	modeNative
)

// New returns a Backend over c configured by opts. c may be a
// *redis.Client, a Sentinel failover client or a *redis.ClusterClient. New
// does no I/O.
func New(c redis.UniversalClient, opts Options) *Backend {
	b := &Backend{c: c, native: opts.Native, noFence: opts.NoFencing}
	switch b.native {
	case NativeOff:
		b.mode.Store(modeScripts)
	case NativeOn:
		b.mode.Store(modeNative)
	default:
		b.mode.Store(modeUnknown)
	}
	return b
}

// The scripts return integers only, so that a missing key never surfaces as
// redis.Nil. Acquire is strictly SET NX: finding its own value is a refusal
// (the lockapi contract), so a lost reply is cleaned up by the caller's
// compare-and-delete, as lockapi.Client does.
var (
	acquireScript = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
	return redis.call('INCR', KEYS[2])
end
return 0`)
	acquireNoFenceScript = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
	return 1
end
return 0`)
	releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
	return redis.call('DEL', KEYS[1])
end
return 0`)
	refreshScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
	return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`)
	// pttlScript replies -3 for "not held", keeping PTTL's own -1 (no TTL).
	pttlScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
	return redis.call('PTTL', KEYS[1])
end
return -3`)
)

// ttlMillis converts a TTL to PX milliseconds, rounding up so that the
// server never holds the lock for less time than the caller asked for (a
// holder believing in a longer lease than the server's would be unsafe).
func ttlMillis(ttl time.Duration) (int64, error) {
	if ttl < lockapi.MinTTL || ttl > lockapi.MaxTTL {
		return 0, ErrInvalidTTL
	}
	ms := int64(ttl / time.Millisecond)
	if ttl%time.Millisecond != 0 {
		ms++
	}
	return ms, nil
}

// Acquire stores value at key for ttl only if key is absent and returns the
// key's next fencing token (0 with NoFencing). ok is false when another
// value holds key. Errors: ErrInvalidTTL or an *OpError.
func (b *Backend) Acquire(ctx context.Context, key, value string, ttl time.Duration) (fence int64, ok bool, err error) {
	ms, err := ttlMillis(ttl)
	if err != nil {
		return 0, false, err
	}
	if b.noFence {
		n, err := acquireNoFenceScript.Run(ctx, b.c, []string{key}, value, ms).Int64()
		if err != nil {
			return 0, false, &OpError{Op: "acquire", Key: key, Err: err}
		}
		return 0, n == 1, nil
	}
	n, err := acquireScript.Run(ctx, b.c, []string{key, FenceKey(key)}, value, ms).Int64()
	if err != nil {
		return 0, false, &OpError{Op: "acquire", Key: key, Err: err}
	}
	if n <= 0 {
		return 0, false, nil
	}
	return n, true, nil
}

// Release deletes key only if it holds value. ok is false when key is
// absent or holds another value. Errors: an *OpError.
func (b *Backend) Release(ctx context.Context, key, value string) (ok bool, err error) {
	if b.useNative(ctx) {
		n, err := b.c.Do(ctx, "DELEX", key, "IFEQ", value).Int64()
		if err == nil {
			return n == 1, nil
		}
		if !b.nativeRejected(err) {
			return false, &OpError{Op: "release", Key: key, Err: err}
		}
	}
	n, err := releaseScript.Run(ctx, b.c, []string{key}, value).Int64()
	if err != nil {
		return false, &OpError{Op: "release", Key: key, Err: err}
	}
	return n == 1, nil
}

// Refresh sets key's TTL to ttl only if it holds value. ok is false when key
// is absent or holds another value. Errors: ErrInvalidTTL or an *OpError.
func (b *Backend) Refresh(ctx context.Context, key, value string, ttl time.Duration) (ok bool, err error) {
	ms, err := ttlMillis(ttl)
	if err != nil {
		return false, err
	}
	if b.useNative(ctx) {
		err := b.c.Do(ctx, "SET", key, value, "IFEQ", value, "PX", ms).Err()
		if err == nil {
			return true, nil
		}
		if errors.Is(err, redis.Nil) {
			return false, nil
		}
		if !b.nativeRejected(err) {
			return false, &OpError{Op: "refresh", Key: key, Err: err}
		}
	}
	n, err := refreshScript.Run(ctx, b.c, []string{key}, value, ms).Int64()
	if err != nil {
		return false, &OpError{Op: "refresh", Key: key, Err: err}
	}
	return n == 1, nil
}

// PTTL returns key's remaining TTL, at millisecond resolution, only if key
// holds value; ok is false when key is absent or holds another value. A key
// holding value without a TTL (set by someone else's plain SET) reports -1ns
// with ok true. Errors: an *OpError.
func (b *Backend) PTTL(ctx context.Context, key, value string) (ttl time.Duration, ok bool, err error) {
	n, err := pttlScript.Run(ctx, b.c, []string{key}, value).Int64()
	if err != nil {
		return 0, false, &OpError{Op: "pttl", Key: key, Err: err}
	}
	d, ok := pttlReply(n)
	return d, ok, nil
}

// pttlReply reads the reply of a PTTL script: -3 (not held) or -2 (no
// key) is not held, -1 is held without a TTL (ttl -1), n >= 0 is held for
// n more milliseconds.
func pttlReply(n int64) (ttl time.Duration, ok bool) {
	switch {
	case n == -3 || n == -2:
		return 0, false
	case n == -1:
		return -1, true
	}
	return time.Duration(n) * time.Millisecond, true
}

// useNative reports whether Release and Refresh should try the native
// commands, probing the server once under NativeAuto.
func (b *Backend) useNative(ctx context.Context) bool {
	if m := b.mode.Load(); m != modeUnknown {
		return m == modeNative
	}
	b.probeMu.Lock()
	defer b.probeMu.Unlock()
	if b.mode.Load() == modeUnknown {
		m := modeScripts
		if info, err := b.c.Info(ctx, "server").Result(); err == nil && nativeVersion(info) {
			m = modeNative
		}
		b.mode.Store(m)
	}
	return b.mode.Load() == modeNative
}

// nativeRejected reports whether err is a server refusing a native command
// it does not know; if so it switches the Backend to scripts.
func (b *Backend) nativeRejected(err error) bool {
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return false
	}
	msg := rerr.Error()
	if !strings.HasPrefix(msg, "ERR unknown command") && !strings.HasPrefix(msg, "ERR syntax error") {
		return false
	}
	b.mode.Store(modeScripts)
	return true
}

// nativeVersion reports whether an INFO server reply names Redis 8.4 or
// later, the first version with DELEX and SET IFEQ.
func nativeVersion(info string) bool {
	for _, line := range strings.Split(info, "\n") {
		v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:")
		if !ok {
			continue
		}
		parts := strings.SplitN(v, ".", 3)
		if len(parts) < 2 {
			return false
		}
		major, err1 := strconv.Atoi(parts[0])
		minor, err2 := strconv.Atoi(parts[1])
		if err1 != nil || err2 != nil {
			return false
		}
		return major > 8 || major == 8 && minor >= 4
	}
	return false
}
