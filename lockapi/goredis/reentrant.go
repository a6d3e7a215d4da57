package goredis

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/nxkv/nxkv/internal/lockkeys"
)

// A reentrant lock is its key, holding the owner's value, and a hold key
// (lockkeys.Hold, in the key's hash slot) with the same deadline holding
// "<holds> <fence>": the number of holds and the first hold's fencing
// token. The layout is the in-process backend's.
var (
	// acquireReentrantScript: KEYS key, hold key, fencing counter; ARGV
	// value, PX milliseconds, "1" to count a fence. It replies {ok, holds,
	// fence}.
	acquireReentrantScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then
	local f = 0
	if ARGV[3] == '1' then f = redis.call('INCR', KEYS[3]) end
	redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
	redis.call('SET', KEYS[2], '1 ' .. string.format('%d', f), 'PX', ARGV[2])
	return {1, 1, f}
end
if v ~= ARGV[1] then return {0, 0, 0} end
local h = redis.call('GET', KEYS[2])
if not h then return {0, 0, 0} end
local n, f = string.match(h, '^(%d+) (%-?%d+)$')
if not n or tonumber(n) < 1 then return {0, 0, 0} end
n = tonumber(n) + 1
redis.call('PEXPIRE', KEYS[1], ARGV[2], 'GT')
local at = redis.call('PEXPIRETIME', KEYS[1])
if at > 0 then
	redis.call('SET', KEYS[2], string.format('%d', n) .. ' ' .. f, 'PXAT', at)
else
	redis.call('SET', KEYS[2], string.format('%d', n) .. ' ' .. f)
end
return {1, n, tonumber(f)}`)
	// releaseReentrantScript: KEYS key, hold key; ARGV value. It replies
	// {ok, holds left}.
	releaseReentrantScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {0, 0} end
local h = redis.call('GET', KEYS[2])
local n, f
if h then n, f = string.match(h, '^(%d+) (%-?%d+)$') end
if n and tonumber(n) > 1 then
	n = tonumber(n) - 1
	redis.call('SET', KEYS[2], string.format('%d', n) .. ' ' .. f, 'KEEPTTL')
	return {1, n}
end
redis.call('DEL', KEYS[1], KEYS[2])
return {1, 0}`)
	// refreshReentrantScript: KEYS key, hold key; ARGV value, PX
	// milliseconds. It never shortens the TTL.
	refreshReentrantScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2], 'GT')
if redis.call('EXISTS', KEYS[2]) == 1 then
	local at = redis.call('PEXPIRETIME', KEYS[1])
	if at > 0 then redis.call('PEXPIREAT', KEYS[2], at) end
end
return 1`)
)

// AcquireReentrant takes key for value with ttl and one hold if key is
// absent; if key holds value and has a hold count, it adds a hold and makes
// the TTL at least ttl. It returns the first hold's fencing token (0 with
// NoFencing) and the hold count after the call, in one script. Errors:
// ErrInvalidTTL or an *OpError.
func (b *Backend) AcquireReentrant(ctx context.Context, key, value string, ttl time.Duration) (fence int64, holds int, ok bool, err error) {
	ms, err := ttlMillis(ttl)
	if err != nil {
		return 0, 0, false, err
	}
	fencing := "1"
	if b.noFence {
		fencing = "0"
	}
	res, err := acquireReentrantScript.Run(ctx, b.c, []string{key, lockkeys.Hold(key), FenceKey(key)}, value, ms, fencing).Int64Slice()
	if err != nil || len(res) != 3 {
		return 0, 0, false, opError("acquire", key, err, res)
	}
	if res[0] != 1 {
		return 0, 0, false, nil
	}
	return res[2], int(res[1]), true, nil
}

// ReleaseReentrant removes one hold if key holds value, deleting the key
// and its hold key with the last one; holds is the count left. Errors: an
// *OpError.
func (b *Backend) ReleaseReentrant(ctx context.Context, key, value string) (holds int, ok bool, err error) {
	res, err := releaseReentrantScript.Run(ctx, b.c, []string{key, lockkeys.Hold(key)}, value).Int64Slice()
	if err != nil || len(res) != 2 {
		return 0, false, opError("release", key, err, res)
	}
	return int(res[1]), res[0] == 1, nil
}

// RefreshReentrant makes key's TTL at least ttl (never shorter) if key
// holds value. Errors: ErrInvalidTTL or an *OpError.
func (b *Backend) RefreshReentrant(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	ms, err := ttlMillis(ttl)
	if err != nil {
		return false, err
	}
	n, err := refreshReentrantScript.Run(ctx, b.c, []string{key, lockkeys.Hold(key)}, value, ms).Int64()
	if err != nil {
		return false, &OpError{Op: "refresh", Key: key, Err: err}
	}
	return n == 1, nil
}
