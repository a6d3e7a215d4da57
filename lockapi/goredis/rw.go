package goredis

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/nxkv/nxkv/internal/lockkeys"
)

// A read-write lock is the keys of lockkeys.RW, the in-process backend's
// layout: the writer, the waiting writer's mark and one key per reader,
// each with its own TTL; a counter giving reader ids and fencing tokens;
// and the list of reader ids (decimal, joined by ','), without TTL, pruned
// of readers gone whenever a reader or writer acquires. Reader keys are
// the prefix (ARGV) followed by the id: built inside the scripts, they
// carry the lock's hash tag and so lie in the declared keys' slot. KEYS
// are always the writer, the mark, the list and the counter.
var (
	// acquireReadScript: ARGV value, PX milliseconds, reader key prefix.
	// It replies {1, id, 0} or {0, 0, 1} (the writer holds) or {0, 0, 2}
	// (a writer waits).
	acquireReadScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return {0, 0, 1} end
if redis.call('EXISTS', KEYS[2]) == 1 then return {0, 0, 2} end
local id = redis.call('INCR', KEYS[4])
redis.call('SET', ARGV[3] .. string.format('%d', id), ARGV[1], 'PX', ARGV[2])
local live = {}
local list = redis.call('GET', KEYS[3])
if list then
	for s in string.gmatch(list, '[^,]+') do
		if redis.call('EXISTS', ARGV[3] .. s) == 1 then live[#live + 1] = s end
	end
end
live[#live + 1] = string.format('%d', id)
redis.call('SET', KEYS[3], table.concat(live, ','))
return {1, id, 0}`)
	// acquireWriteScript: ARGV value, PX milliseconds, reader key prefix,
	// "1" to mark the writer waiting on failure. It replies {1, id, 0},
	// {0, 0, 1} (the writer holds) or {0, id, 3} (reader id is live).
	acquireWriteScript = redis.NewScript(`
local function mark()
	if ARGV[4] ~= '1' then return end
	local q = redis.call('GET', KEYS[2])
	if not q then
		redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
	elseif q == ARGV[1] then
		redis.call('PEXPIRE', KEYS[2], ARGV[2])
	end
end
if redis.call('EXISTS', KEYS[1]) == 1 then
	mark()
	return {0, 0, 1}
end
local list = redis.call('GET', KEYS[3])
local live = {}
if list then
	local n = 0
	for s in string.gmatch(list, '[^,]+') do
		n = n + 1
		if redis.call('EXISTS', ARGV[3] .. s) == 1 then live[#live + 1] = s end
	end
	if #live == 0 then
		redis.call('DEL', KEYS[3])
	elseif #live ~= n then
		redis.call('SET', KEYS[3], table.concat(live, ','))
	end
end
if #live > 0 then
	mark()
	return {0, tonumber(live[1]), 3}
end
local id = redis.call('INCR', KEYS[4])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
return {1, id, 0}`)
	// abandonScript: ARGV value, reader key prefix.
	abandonScript = redis.NewScript(`
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
local list = redis.call('GET', KEYS[3])
if list then
	local live = {}
	for s in string.gmatch(list, '[^,]+') do
		local k = ARGV[2] .. s
		local v = redis.call('GET', k)
		if v == ARGV[1] then
			redis.call('DEL', k)
		elseif v then
			live[#live + 1] = s
		end
	end
	if #live == 0 then
		redis.call('DEL', KEYS[3])
	else
		redis.call('SET', KEYS[3], table.concat(live, ','))
	end
end
return 0`)
)

func rwKeys(lk lockkeys.RW) []string {
	return []string{lk.Writer(), lk.Queue(), lk.Readers(), lk.Counter()}
}

// rwResult turns a script's {ok, id, blocker} reply into the id of the
// lease acquired, or the key that blocked the attempt.
func rwResult(lk lockkeys.RW, name string, res []int64, err error) (blocked string, id int64, ok bool, _ error) {
	if err != nil || len(res) != 3 {
		return "", 0, false, opError("acquire", name, err, res)
	}
	if res[0] == 1 {
		return "", res[1], true, nil
	}
	switch res[2] {
	case 1:
		return lk.Writer(), 0, false, nil
	case 2:
		return lk.Queue(), 0, false, nil
	}
	return lk.Reader(res[1]), 0, false, nil
}

// AcquireRead takes a read lease on name for value with ttl, in one script,
// unless a writer holds the lock or waits for it. On success key is the
// reader's key and fence its id, the lock's next fencing token (0 with
// NoFencing); on failure key is the writer's or the waiting mark's.
// Errors: ErrInvalidTTL or an *OpError.
func (b *Backend) AcquireRead(ctx context.Context, name, value string, ttl time.Duration) (string, int64, bool, error) {
	ms, err := ttlMillis(ttl)
	if err != nil {
		return "", 0, false, err
	}
	lk := lockkeys.NewRW(name)
	res, err := acquireReadScript.Run(ctx, b.c, rwKeys(lk), value, ms, lk.Prefix()).Int64Slice()
	key, fence, ok, err := rwResult(lk, name, res, err)
	if ok {
		key = lk.Reader(fence)
	}
	if b.noFence {
		fence = 0
	}
	return key, fence, ok, err
}

// AcquireWrite takes the write lease on name for value with ttl, in one
// script, if no writer holds it and no reader's key is live; on failure it
// marks value waiting if queue (see lockapi.RWBackend). On success key is
// the writer's key and fence the lock's next fencing token (0 with
// NoFencing); on failure key is the writer's or a live reader's. Errors:
// ErrInvalidTTL or an *OpError.
func (b *Backend) AcquireWrite(ctx context.Context, name, value string, ttl time.Duration, queue bool) (string, int64, bool, error) {
	ms, err := ttlMillis(ttl)
	if err != nil {
		return "", 0, false, err
	}
	q := "0"
	if queue {
		q = "1"
	}
	lk := lockkeys.NewRW(name)
	res, err := acquireWriteScript.Run(ctx, b.c, rwKeys(lk), value, ms, lk.Prefix(), q).Int64Slice()
	key, fence, ok, err := rwResult(lk, name, res, err)
	if ok {
		key = lk.Writer()
	}
	if b.noFence {
		fence = 0
	}
	return key, fence, ok, err
}

// Abandon removes value's waiting mark on name and any lease value holds
// there, in one script. Errors: an *OpError.
func (b *Backend) Abandon(ctx context.Context, name, value string) error {
	lk := lockkeys.NewRW(name)
	if err := abandonScript.Run(ctx, b.c, rwKeys(lk), value, lk.Prefix()).Err(); err != nil {
		return &OpError{Op: "abandon", Key: name, Err: err}
	}
	return nil
}
