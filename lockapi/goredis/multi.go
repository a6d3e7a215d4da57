package goredis

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/nxkv/nxkv/lockapi"
)

// ErrCrossSlot is returned by the multi-key calls on a Cluster client when
// the keys lie in different hash slots, which one script cannot touch; it
// wraps lockapi.ErrInvalidKey. Nothing is sent. Give such keys a common
// hash tag ("{order:7}:items", "{order:7}:payment").
var ErrCrossSlot = fmt.Errorf("goredis: keys in different Cluster hash slots: %w", lockapi.ErrInvalidKey)

// The multi-key scripts. KEYS are the n lock keys, then (for acquire with
// fencing) their n fencing counters; ARGV[1] is the value. Acquire
// increments every counter before it writes any key, so an error leaves no
// partial hold; it replies {0, index of a held key} or {1, fences...}.
var (
	acquireAllScript = redis.NewScript(`
local n = tonumber(ARGV[3])
for i = 1, n do
	if redis.call('EXISTS', KEYS[i]) == 1 then return {0, i - 1} end
end
local out = {1}
if #KEYS > n then
	for i = 1, n do out[i + 1] = redis.call('INCR', KEYS[n + i]) end
end
for i = 1, n do redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2]) end
return out`)
	releaseAllScript = redis.NewScript(`
local n = 0
for i = 1, #KEYS do
	if redis.call('GET', KEYS[i]) == ARGV[1] then
		redis.call('DEL', KEYS[i])
		n = n + 1
	end
end
return n`)
	refreshAllScript = redis.NewScript(`
for i = 1, #KEYS do
	if redis.call('GET', KEYS[i]) ~= ARGV[1] then return 0 end
end
for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[2]) end
return 1`)
	// pttlAllScript replies -3 for "not held", else the least PTTL (-1
	// when no key has a TTL).
	pttlAllScript = redis.NewScript(`
local least = -1
for i = 1, #KEYS do
	if redis.call('GET', KEYS[i]) ~= ARGV[1] then return -3 end
	local d = redis.call('PTTL', KEYS[i])
	if d >= 0 and (least < 0 or d < least) then least = d end
end
return least`)
)

// checkSlots returns ErrCrossSlot if the client is a Cluster client and
// keys span several hash slots.
func (b *Backend) checkSlots(keys []string) error {
	if _, ok := b.c.(*redis.ClusterClient); !ok || len(keys) < 2 {
		return nil
	}
	s := slot(keys[0])
	for _, k := range keys[1:] {
		if slot(k) != s {
			return ErrCrossSlot
		}
	}
	return nil
}

// AcquireAll stores value for ttl at every key, in one script, only if
// none of them is held, and returns each key's fencing token (nil with
// NoFencing), from the same counters as single locks' (FenceKey). When a
// key is held, blocked is its index and nothing is written. Errors:
// ErrInvalidTTL, ErrCrossSlot or an *OpError.
func (b *Backend) AcquireAll(ctx context.Context, keys []string, value string, ttl time.Duration) (fences []int64, blocked int, ok bool, err error) {
	ms, err := ttlMillis(ttl)
	if err != nil {
		return nil, 0, false, err
	}
	if err := b.checkSlots(keys); err != nil {
		return nil, 0, false, err
	}
	all := keys
	if !b.noFence {
		all = make([]string, 2*len(keys))
		copy(all, keys)
		for i, k := range keys {
			all[len(keys)+i] = FenceKey(k)
		}
	}
	res, err := acquireAllScript.Run(ctx, b.c, all, value, ms, len(keys)).Int64Slice()
	if err != nil || len(res) < 1 {
		return nil, 0, false, opError("acquire", keys[0], err, res)
	}
	if res[0] == 0 {
		if len(res) != 2 {
			return nil, 0, false, opError("acquire", keys[0], nil, res)
		}
		return nil, int(res[1]), false, nil
	}
	if !b.noFence {
		if len(res) != len(keys)+1 {
			return nil, 0, false, opError("acquire", keys[0], nil, res)
		}
		fences = res[1:]
	}
	return fences, 0, true, nil
}

// ReleaseAll deletes every key holding value, in one script, and reports
// whether all of them did. Errors: ErrCrossSlot or an *OpError.
func (b *Backend) ReleaseAll(ctx context.Context, keys []string, value string) (bool, error) {
	if err := b.checkSlots(keys); err != nil {
		return false, err
	}
	n, err := releaseAllScript.Run(ctx, b.c, keys, value).Int64()
	if err != nil {
		return false, &OpError{Op: "release", Key: keys[0], Err: err}
	}
	return n == int64(len(keys)), nil
}

// RefreshAll sets every key's TTL to ttl, in one script, only if all of
// them hold value. Errors: ErrInvalidTTL, ErrCrossSlot or an *OpError.
func (b *Backend) RefreshAll(ctx context.Context, keys []string, value string, ttl time.Duration) (bool, error) {
	ms, err := ttlMillis(ttl)
	if err != nil {
		return false, err
	}
	if err := b.checkSlots(keys); err != nil {
		return false, err
	}
	n, err := refreshAllScript.Run(ctx, b.c, keys, value, ms).Int64()
	if err != nil {
		return false, &OpError{Op: "refresh", Key: keys[0], Err: err}
	}
	return n == 1, nil
}

// PTTLAll returns the least remaining TTL of keys, at millisecond
// resolution and read in one script, if all of them hold value (-1ns if
// none has a TTL). Errors: ErrCrossSlot or an *OpError.
func (b *Backend) PTTLAll(ctx context.Context, keys []string, value string) (time.Duration, bool, error) {
	if err := b.checkSlots(keys); err != nil {
		return 0, false, err
	}
	n, err := pttlAllScript.Run(ctx, b.c, keys, value).Int64()
	if err != nil {
		return 0, false, &OpError{Op: "pttl", Key: keys[0], Err: err}
	}
	switch {
	case n == -3:
		return 0, false, nil
	case n == -1:
		return -1, true, nil
	}
	return time.Duration(n) * time.Millisecond, true, nil
}
