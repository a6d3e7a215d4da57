package inproc

import (
	"context"
	"time"

	"github.com/nxkv/nxkv/engine"
)

// AcquireAll stores value with ttl at every key, in one engine section
// (Update), only if none of them is held, and returns each key's fencing
// token (nil with NoFencing); the tokens are those SetNXPXFenced gives, so
// they are ordered with the key's single locks' tokens. When a key is
// held, blocked is its index and nothing is written. It returns
// engine.ErrInvalidTTL for a ttl <= 0 or a deadline out of range.
func (b *Backend) AcquireAll(_ context.Context, keys []string, value string, ttl time.Duration) (fences []int64, blocked int, ok bool, err error) {
	if ttl <= 0 {
		return nil, 0, false, engine.ErrInvalidTTL
	}
	b.e.Update(keys, func(tx *engine.Tx) {
		for i, k := range keys {
			if tx.Exists(k) {
				blocked = i
				return
			}
		}
		fences = make([]int64, len(keys))
		for i, k := range keys {
			// SetNXPXFenced even without fencing: a bounded engine never
			// evicts the keys it writes.
			if fences[i], _, err = tx.SetNXPXFenced(k, value, ttl); err != nil {
				// Only the first write can fail (the deadline is the same
				// for every key), so nothing was written.
				fences = nil
				return
			}
		}
		ok = true
	})
	if b.noFence {
		fences = nil
	}
	return fences, blocked, ok, err
}

// ReleaseAll deletes every key holding value, in one engine section, and
// reports whether all of them did.
func (b *Backend) ReleaseAll(_ context.Context, keys []string, value string) (bool, error) {
	n := 0
	b.e.Update(keys, func(tx *engine.Tx) {
		for _, k := range keys {
			if tx.CompareAndDelete(k, value) {
				n++
			}
		}
	})
	return n == len(keys), nil
}

// RefreshAll sets every key's TTL to ttl, in one engine section, only if
// all of them hold value. It returns engine.ErrInvalidTTL for a ttl <= 0.
func (b *Backend) RefreshAll(_ context.Context, keys []string, value string, ttl time.Duration) (ok bool, err error) {
	if ttl <= 0 {
		return false, engine.ErrInvalidTTL
	}
	b.e.Update(keys, func(tx *engine.Tx) {
		for _, k := range keys {
			if v, held := tx.Get(k); !held || v != value {
				return
			}
		}
		for _, k := range keys {
			if _, err = tx.CompareAndPExpire(k, value, ttl); err != nil {
				return // only the first can fail: nothing changed
			}
		}
		ok = true
	})
	return ok, err
}

// PTTLAll returns the least remaining TTL of keys, read in one engine
// section, if all of them hold value (engine.NoExpiry if none has a TTL).
func (b *Backend) PTTLAll(_ context.Context, keys []string, value string) (ttl time.Duration, ok bool, err error) {
	b.e.Update(keys, func(tx *engine.Tx) {
		ttl = engine.NoExpiry
		for _, k := range keys {
			v, d, held := tx.GetPTTL(k)
			if !held || v != value {
				return
			}
			if d != engine.NoExpiry && (ttl == engine.NoExpiry || d < ttl) {
				ttl = d
			}
		}
		ok = true
	})
	if !ok {
		ttl = 0
	}
	return ttl, ok, nil
}
