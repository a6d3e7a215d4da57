package inproc

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/internal/lockkeys"
	"github.com/nxkv/nxkv/lockapi"
)

// A reentrant lock is its key, holding the owner's value, and a hold key
// (lockkeys.Hold) with the same deadline holding "<fence> <id> <id>...":
// the lease's first fencing token and the IDs of the owner's holds, in the
// order they were taken.

// parseHolds reads a hold key's value; ok is false if it is malformed or
// names no hold.
func parseHolds(s string) (fence int64, ids []string, ok bool) {
	f, rest, found := strings.Cut(s, " ")
	if !found || rest == "" {
		return 0, nil, false
	}
	fe, err := strconv.ParseInt(f, 10, 64)
	if err != nil {
		return 0, nil, false
	}
	ids = strings.Fields(rest)
	return fe, ids, len(ids) > 0
}

func formatHolds(fence int64, ids []string) string {
	return strconv.FormatInt(fence, 10) + " " + strings.Join(ids, " ")
}

// checkHold rejects a hold ID that the hold key's format cannot carry.
func checkHold(hold string) error {
	if !lockkeys.ValidHold(hold) {
		return fmt.Errorf("%w: hold ID %q is empty or contains a space", lockapi.ErrInvalidOption, hold)
	}
	return nil
}

// AcquireReentrant takes key for value with ttl and the one hold hold if
// key is absent; if key holds value and has holds, it adds hold (unless it
// is there already) and makes the TTL at least ttl. It returns the lease's
// first fencing token (0 with NoFencing) and the number of holds after the
// call. One engine section over the key and its hold key. It returns
// engine.ErrInvalidTTL for a ttl <= 0 or a deadline out of range, and an
// error matching lockapi.ErrInvalidOption for an empty hold or one with a
// space, changing nothing.
func (b *Backend) AcquireReentrant(_ context.Context, key, value, hold string, ttl time.Duration) (fence int64, holds int, ok bool, err error) {
	if ttl <= 0 {
		return 0, 0, false, engine.ErrInvalidTTL
	}
	if err := checkHold(hold); err != nil {
		return 0, 0, false, err
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
			tx.SetWith(hk, formatHolds(fence, []string{hold}), engine.SetArgs{TTL: ttl})
			holds, ok = 1, true
			return
		}
		if v != value {
			return
		}
		h, hv := tx.Get(hk)
		f, ids, valid := parseHolds(h)
		if !hv || !valid {
			return // held, but not reentrantly
		}
		if _, err = tx.PExpireCond(key, ttl, engine.ExpireGT); err != nil {
			return
		}
		if !slices.Contains(ids, hold) {
			ids = append(ids, hold)
		}
		b.setHolds(tx, key, hk, f, ids)
		fence, holds, ok = f, len(ids), true
	})
	return fence, holds, ok, err
}

// setHolds stores the holds (fence f, IDs ids) with key's deadline.
func (b *Backend) setHolds(tx *engine.Tx, key, hk string, f int64, ids []string) {
	at, _ := tx.ExpireTime(key)
	tx.SetWith(hk, formatHolds(f, ids), engine.SetArgs{At: at})
}

// ReleaseReentrant removes hold if key holds value and hold is one of its
// holds, deleting the key (and its hold key) with the last one; holds is
// the number left. It returns an error matching lockapi.ErrInvalidOption for an empty hold or one with
// a space.
func (b *Backend) ReleaseReentrant(_ context.Context, key, value, hold string) (holds int, ok bool, err error) {
	if err := checkHold(hold); err != nil {
		return 0, false, err
	}
	hk := lockkeys.Hold(key)
	b.e.Update([]string{key, hk}, func(tx *engine.Tx) {
		if v, held := tx.Get(key); !held || v != value {
			return
		}
		h, hv := tx.Get(hk)
		f, ids, valid := parseHolds(h)
		if !hv || !valid {
			// Not a reentrant lease: the owner took the key again without
			// Reentrant after this hold's lease ended.
			return
		}
		i := slices.Index(ids, hold)
		if i < 0 {
			return // released already, or a hold of an earlier lease
		}
		ok = true
		if ids = slices.Delete(ids, i, i+1); len(ids) > 0 {
			tx.SetWith(hk, formatHolds(f, ids), engine.SetArgs{KeepTTL: true})
			holds = len(ids)
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
			if f, ids, valid := parseHolds(h); valid {
				b.setHolds(tx, key, hk, f, ids)
			}
		}
		ok = true
	})
	return ok, err
}
