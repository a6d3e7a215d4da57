package inproc

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/internal/lockkeys"
	"github.com/nxkv/nxkv/lockapi"
)

// AcquireSlot stores value with ttl in the lowest free slot of semaphore
// name below limit and returns the slot's key and, unless NoFencing, the
// semaphore's next fencing token; ok is false when every slot below limit
// is held. It finds the slot with lock-free reads, then claims it in one
// engine section (Update) with the counter, and looks again if another
// claim got there first; so every slot reported held was held when read,
// and a lease and its fence are taken atomically. It returns
// engine.ErrInvalidTTL for a ttl <= 0 or a deadline out of range,
// an error matching lockapi.ErrInvalidOption for a limit outside [1,
// lockapi.MaxLimit], and engine.ErrNotInteger if the counter key was
// overwritten.
func (b *Backend) AcquireSlot(_ context.Context, name string, limit int, value string, ttl time.Duration) (string, int64, bool, error) {
	if ttl <= 0 {
		return "", 0, false, engine.ErrInvalidTTL
	}
	if limit < 1 || limit > lockapi.MaxLimit {
		return "", 0, false, fmt.Errorf("inproc: semaphore limit %d outside [1, %d]: %w", limit, lockapi.MaxLimit, lockapi.ErrInvalidOption)
	}
	keys := lockkeys.NewSemaphore(name).Slots(limit)
	counter := keys[limit]
	for i := 0; i < limit; i++ {
		if b.e.Exists(keys[i]) {
			continue
		}
		// The engine keeps the key: a copy, not a piece of all of them.
		k := strings.Clone(keys[i])
		if b.noFence {
			ok, err := b.e.SetNXPX(k, value, ttl)
			if ok || err != nil {
				return k, 0, ok, err
			}
			continue // taken since the read: look further
		}
		var (
			fence   int64
			claimed bool
			err     error
		)
		b.e.Update([]string{k, counter}, func(tx *engine.Tx) {
			if tx.Exists(k) {
				return
			}
			if fence, err = tx.IncrBy(counter, 1); err != nil {
				return
			}
			_, err = tx.SetWith(k, value, engine.SetArgs{TTL: ttl})
			claimed = err == nil
		})
		if claimed || err != nil {
			return k, fence, claimed, err
		}
	}
	return "", 0, false, nil
}

// SlotKey returns the engine key of slot i of semaphore name.
func (b *Backend) SlotKey(name string, i int) string {
	return lockkeys.NewSemaphore(name).Slot(i)
}
