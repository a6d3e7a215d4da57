package inproc

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/internal/lockkeys"
)

// A reentrant lock is its key, holding the owner's value, and a hold key
// (lockkeys.Hold) with the same deadline holding "<holds> <fence>": the
// number of holds and the first hold's fencing token.

func formatHolds(holds, fence int64) string {
	return strconv.FormatInt(holds, 10) + " " + strconv.FormatInt(fence, 10)
}

// parseHolds reads a hold key's value; ok is false if it is malformed.
func parseHolds(s string) (holds, fence int64, ok bool) {
	a, f, found := strings.Cut(s, " ")
	if !found {
		return 0, 0, false
	}
	h, err1 := strconv.ParseInt(a, 10, 64)
	fe, err2 := strconv.ParseInt(f, 10, 64)
	return h, fe, err1 == nil && err2 == nil && h > 0
}

// AcquireReentrant takes key for value with ttl and one hold if key is
// absent; if key holds value and has a hold count, it adds a hold and makes
// the TTL at least ttl. It returns the first hold's fencing token (0 with
// NoFencing) and the hold count after the call. One engine section over the
// key and its hold key. It returns engine.ErrInvalidTTL for a ttl <= 0 or a
// deadline out of range.
func (b *Backend) AcquireReentrant(_ context.Context, key, value string, ttl time.Duration) (fence int64, holds int, ok bool, err error) {
	if ttl <= 0 {
		return 0, 0, false, engine.ErrInvalidTTL
	}
	hk := lockkeys.Hold(key)
	b.e.Update([]string{key, hk}, func(tx *engine.Tx) {
		v, held := tx.Get(key)
		if !held {
			if b.noFence {
				_, err = tx.SetWith(key, value, engine.SetArgs{Cond: engine.IfAbsent, TTL: ttl})
			} else {
				fence, _, err = tx.SetNXPXFenced(key, value, ttl)
			}
			if err != nil {
				return
			}
			tx.SetWith(hk, formatHolds(1, fence), engine.SetArgs{TTL: ttl})
			holds, ok = 1, true
			return
		}
		if v != value {
			return
		}
		h, hv := tx.Get(hk)
		n, f, valid := parseHolds(h)
		if !hv || !valid {
			return // held, but not reentrantly
		}
		if _, err = tx.PExpireCond(key, ttl, engine.ExpireGT); err != nil {
			return
		}
		b.setHolds(tx, key, hk, n+1, f)
		fence, holds, ok = f, int(n+1), true
	})
	return fence, holds, ok, err
}

// setHolds stores the hold count n (fence f) with key's deadline.
func (b *Backend) setHolds(tx *engine.Tx, key, hk string, n, f int64) {
	at, _ := tx.ExpireTime(key)
	tx.SetWith(hk, formatHolds(n, f), engine.SetArgs{At: at})
}

// ReleaseReentrant removes one hold if key holds value, deleting the key
// (and its hold key) with the last one; holds is the count left. A key
// holding value without a hold count is deleted.
func (b *Backend) ReleaseReentrant(_ context.Context, key, value string) (holds int, ok bool, err error) {
	hk := lockkeys.Hold(key)
	b.e.Update([]string{key, hk}, func(tx *engine.Tx) {
		if v, held := tx.Get(key); !held || v != value {
			return
		}
		ok = true
		h, _ := tx.Get(hk)
		if n, f, valid := parseHolds(h); valid && n > 1 {
			tx.SetWith(hk, formatHolds(n-1, f), engine.SetArgs{KeepTTL: true})
			holds = int(n - 1)
			return
		}
		tx.Del(key, hk)
	})
	return holds, ok, nil
}

// RefreshReentrant makes key's TTL at least ttl (never shorter: the other
// holds count on it) if key holds value. It returns engine.ErrInvalidTTL
// for a ttl <= 0.
func (b *Backend) RefreshReentrant(_ context.Context, key, value string, ttl time.Duration) (ok bool, err error) {
	if ttl <= 0 {
		return false, engine.ErrInvalidTTL
	}
	hk := lockkeys.Hold(key)
	b.e.Update([]string{key, hk}, func(tx *engine.Tx) {
		if v, held := tx.Get(key); !held || v != value {
			return
		}
		if _, err = tx.PExpireCond(key, ttl, engine.ExpireGT); err != nil {
			return
		}
		if h, hv := tx.Get(hk); hv {
			if n, f, valid := parseHolds(h); valid {
				b.setHolds(tx, key, hk, n, f)
			}
		}
		ok = true
	})
	return ok, err
}
