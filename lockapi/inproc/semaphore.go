package inproc

import (
	"context"
	"strings"
	"time"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/internal/lockkeys"
)

// AcquireSlot stores value with ttl in the lowest free slot of semaphore
// name below limit and returns the slot's key and, unless NoFencing, the
// semaphore's next fencing token; ok is false when every slot below limit
// is held. It is one engine section (Update) over the slots and the
// counter. It returns engine.ErrInvalidTTL for a ttl <= 0 or a deadline out
// of range, and engine.ErrNotInteger if the counter key was overwritten.
func (b *Backend) AcquireSlot(_ context.Context, name string, limit int, value string, ttl time.Duration) (string, int64, bool, error) {
	if ttl <= 0 {
		return "", 0, false, engine.ErrInvalidTTL
	}
	keys := lockkeys.NewSemaphore(name).Slots(limit)
	var (
		key   string
		fence int64
		err   error
	)
	b.e.Update(keys, func(tx *engine.Tx) {
		for _, k := range keys[:limit] {
			if tx.Exists(k) {
				continue
			}
			if !b.noFence {
				if fence, err = tx.IncrBy(keys[limit], 1); err != nil {
					return
				}
			}
			// The engine keeps the key: a copy, not a piece of all of them.
			k = strings.Clone(k)
			if _, err = tx.SetWith(k, value, engine.SetArgs{Cond: engine.IfAbsent, TTL: ttl}); err == nil {
				key = k
			}
			return
		}
	})
	if err != nil || key == "" {
		return "", 0, false, err
	}
	return key, fence, true, nil
}

// SlotKey returns the engine key of slot i of semaphore name.
func (b *Backend) SlotKey(name string, i int) string {
	return lockkeys.NewSemaphore(name).Slot(i)
}
