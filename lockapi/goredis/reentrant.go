package goredis

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/nxkv/nxkv/internal/lockkeys"
)

// holdOf is a Lua function for the scripts below: whether key holds value
// and hold is one of the holds in hold key hk.
const holdOf = `
local function holdOf(key, hk, value, hold)
	if redis.call('GET', key) ~= value then return false end
	local h = redis.call('GET', hk)
	if not h then return false end
	local f, ids = string.match(h, '^(%-?%d+) (.*)$')
	if not f then return false end
	for id in string.gmatch(ids, '%S+') do
		if id == hold then return true end
	end
	return false
end`

// A reentrant lock is its key, holding the owner's value, and a hold key
// (lockkeys.Hold, in the key's hash slot) with the same deadline holding
// "<fence> <id> <id>...": the lease's first fencing token and the IDs of the
// owner's holds. The layout is the in-process backend's.
var (
	// acquireReentrantScript: KEYS key, hold key, fencing counter; ARGV
	// value, PX milliseconds, "1" to count a fence, hold ID. It replies
	// {ok, holds, fence}. A hold already there is not added again.
	acquireReentrantScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then
	local f = 0
	if ARGV[3] == '1' then f = redis.call('INCR', KEYS[3]) end
	redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
	redis.call('SET', KEYS[2], string.format('%d', f) .. ' ' .. ARGV[4], 'PX', ARGV[2])
	return {1, 1, f}
end
if v ~= ARGV[1] then return {0, 0, 0} end
local h = redis.call('GET', KEYS[2])
if not h then return {0, 0, 0} end
local f, ids = string.match(h, '^(%-?%d+) (.*)$')
if not f then return {0, 0, 0} end
local n, found = 0, false
for id in string.gmatch(ids, '%S+') do
	n = n + 1
	if id == ARGV[4] then found = true end
end
if n == 0 then return {0, 0, 0} end
if not found then
	ids = ids .. ' ' .. ARGV[4]
	n = n + 1
end
redis.call('PEXPIRE', KEYS[1], ARGV[2], 'GT')
local at = redis.call('PEXPIRETIME', KEYS[1])
if at > 0 then
	redis.call('SET', KEYS[2], f .. ' ' .. ids, 'PXAT', at)
else
	redis.call('SET', KEYS[2], f .. ' ' .. ids)
end
return {1, n, tonumber(f)}`)
	// releaseReentrantScript: KEYS key, hold key; ARGV value, hold ID. It
	// replies {ok, holds left}; ok is 0 when the hold is not there.
	releaseReentrantScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {0, 0} end
local h = redis.call('GET', KEYS[2])
if not h then return {0, 0} end
local f, ids = string.match(h, '^(%-?%d+) (.*)$')
if not f then return {0, 0} end
local left, found = {}, false
for id in string.gmatch(ids, '%S+') do
	if id == ARGV[2] and not found then found = true else left[#left + 1] = id end
end
if not found then return {0, 0} end
if #left > 0 then
	redis.call('SET', KEYS[2], f .. ' ' .. table.concat(left, ' '), 'KEEPTTL')
	return {1, #left}
end
redis.call('DEL', KEYS[1], KEYS[2])
return {1, 0}`)
	// refreshReentrantScript: KEYS key, hold key; ARGV value, PX
	// milliseconds, hold ID. It never shortens the TTL; it replies 0 when
	// the hold is not there.
	refreshReentrantScript = redis.NewScript(holdOf + `
if not holdOf(KEYS[1], KEYS[2], ARGV[1], ARGV[3]) then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2], 'GT')
local at = redis.call('PEXPIRETIME', KEYS[1])
if at > 0 then redis.call('PEXPIREAT', KEYS[2], at) end
return 1`)
	// pttlReentrantScript: KEYS key, hold key; ARGV value, hold ID. It
	// replies the key's PTTL, or -3 when the hold is not there.
	pttlReentrantScript = redis.NewScript(holdOf + `
if not holdOf(KEYS[1], KEYS[2], ARGV[1], ARGV[2]) then return -3 end
return redis.call('PTTL', KEYS[1])`)
)

// AcquireReentrant takes key for value with ttl and the one hold hold if
// key is absent; if key holds value and has holds, it adds hold (unless it
// is there already) and makes the TTL at least ttl. It returns the lease's
// first fencing token (0 with NoFencing) and the number of holds after the
// call, in one script. Errors: ErrInvalidTTL, one matching
// lockapi.ErrInvalidOption for an invalid hold (nothing is sent), or an *OpError.
func (b *Backend) AcquireReentrant(ctx context.Context, key, value, hold string, ttl time.Duration) (fence int64, holds int, ok bool, err error) {
	ms, err := ttlMillis(ttl)
	if err != nil {
		return 0, 0, false, err
	}
	if err := lockkeys.CheckHold(hold); err != nil {
		return 0, 0, false, err
	}
	fencing := "1"
	if b.noFence {
		fencing = "0"
	}
	res, err := acquireReentrantScript.Run(ctx, b.c, []string{key, lockkeys.Hold(key), FenceKey(key)}, value, ms, fencing, hold).Int64Slice()
	if err != nil || len(res) != 3 {
		return 0, 0, false, opError("acquire", key, err, res)
	}
	if res[0] != 1 {
		return 0, 0, false, nil
	}
	return res[2], int(res[1]), true, nil
}

// ReleaseReentrant removes hold if key holds value and hold is one of its
// holds, deleting the key and its hold key with the last one; holds is the
// number left. Errors: one matching lockapi.ErrInvalidOption for an invalid
// hold (nothing is sent), or an *OpError.
func (b *Backend) ReleaseReentrant(ctx context.Context, key, value, hold string) (holds int, ok bool, err error) {
	if err := lockkeys.CheckHold(hold); err != nil {
		return 0, false, err
	}
	res, err := releaseReentrantScript.Run(ctx, b.c, []string{key, lockkeys.Hold(key)}, value, hold).Int64Slice()
	if err != nil || len(res) != 2 {
		return 0, false, opError("release", key, err, res)
	}
	return int(res[1]), res[0] == 1, nil
}

// RefreshReentrant makes key's TTL at least ttl (never shorter) if key
// holds value and hold is one of its holds, in one script. Errors:
// ErrInvalidTTL, one matching lockapi.ErrInvalidOption for an invalid hold
// (nothing is sent), or an *OpError.
func (b *Backend) RefreshReentrant(ctx context.Context, key, value, hold string, ttl time.Duration) (bool, error) {
	ms, err := ttlMillis(ttl)
	if err != nil {
		return false, err
	}
	if err := lockkeys.CheckHold(hold); err != nil {
		return false, err
	}
	n, err := refreshReentrantScript.Run(ctx, b.c, []string{key, lockkeys.Hold(key)}, value, ms, hold).Int64()
	if err != nil {
		return false, &OpError{Op: "refresh", Key: key, Err: err}
	}
	return n == 1, nil
}

// PTTLReentrant returns key's remaining TTL if key holds value and hold is
// one of its holds, in one script. Errors: one matching
// lockapi.ErrInvalidOption for an invalid hold (nothing is sent), or an
// *OpError.
func (b *Backend) PTTLReentrant(ctx context.Context, key, value, hold string) (time.Duration, bool, error) {
	if err := lockkeys.CheckHold(hold); err != nil {
		return 0, false, err
	}
	n, err := pttlReentrantScript.Run(ctx, b.c, []string{key, lockkeys.Hold(key)}, value, hold).Int64()
	if err != nil {
		return 0, false, &OpError{Op: "pttl", Key: key, Err: err}
	}
	d, ok := pttlReply(n)
	return d, ok, nil
}
