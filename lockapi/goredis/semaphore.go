package goredis

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/nxkv/nxkv/internal/lockkeys"
	"github.com/nxkv/nxkv/lockapi"
)

// acquireSlotScript takes the lowest free slot: KEYS are the semaphore's
// fencing counter, then its slots in order; ARGV the value, the PX
// milliseconds and "1" to count a fence. The counter is incremented before
// the slot is written, so an error (a counter overwritten with a
// non-integer) leaves no lease behind. It replies {slot, fence}, slot -1
// when all are held.
var acquireSlotScript = redis.NewScript(`
for i = 2, #KEYS do
	if redis.call('EXISTS', KEYS[i]) == 0 then
		local f = 0
		if ARGV[3] == '1' then f = redis.call('INCR', KEYS[1]) end
		redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2])
		return {i - 2, f}
	end
end
return {-1, 0}`)

// AcquireSlot stores value for ttl in the lowest free slot of semaphore
// name below limit, in one script, and returns the slot's key and, unless
// NoFencing, the semaphore's next fencing token (from a counter in the
// semaphore's hash slot). ok is false when every slot is held. Errors:
// ErrInvalidTTL, an error matching lockapi.ErrInvalidOption for a limit
// outside [1, lockapi.MaxLimit], or an *OpError.
func (b *Backend) AcquireSlot(ctx context.Context, name string, limit int, value string, ttl time.Duration) (string, int64, bool, error) {
	ms, err := ttlMillis(ttl)
	if err != nil {
		return "", 0, false, err
	}
	if limit < 1 || limit > lockapi.MaxLimit {
		return "", 0, false, fmt.Errorf("goredis: semaphore limit %d outside [1, %d]: %w", limit, lockapi.MaxLimit, lockapi.ErrInvalidOption)
	}
	slots := lockkeys.NewSemaphore(name).Slots(limit)
	keys := make([]string, limit+1) // the counter first: the script's layout
	keys[0] = slots[limit]
	copy(keys[1:], slots[:limit])
	fencing := "1"
	if b.noFence {
		fencing = "0"
	}
	res, err := acquireSlotScript.Run(ctx, b.c, keys, value, ms, fencing).Int64Slice()
	if err != nil || len(res) != 2 {
		return "", 0, false, opError("acquire", name, err, res)
	}
	if res[0] < 0 {
		return "", 0, false, nil
	}
	return keys[res[0]+1], res[1], true, nil
}

// SlotKey returns the key of slot i of semaphore name.
func (b *Backend) SlotKey(name string, i int) string {
	return lockkeys.NewSemaphore(name).Slot(i)
}
