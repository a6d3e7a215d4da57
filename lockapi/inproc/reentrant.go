package inproc

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/internal/lockkeys"
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
	if err != nil || f[0] == '+' {
		return 0, nil, false
	}
	// Split as the Redis backend's scripts do (Lua's %S+: ASCII spaces).
	ids = strings.FieldsFunc(rest, isLuaSpace)
	return fe, ids, len(ids) > 0
}

// isLuaSpace reports whether c is a space to Lua's %s: ' ', \t, \n, \v,
// \f or \r.
func isLuaSpace(c rune) bool { return c == ' ' || c >= '\t' && c <= '\r' }

func formatHolds(fence int64, ids []string) string {
	return strconv.FormatInt(fence, 10) + " " + strings.Join(ids, " ")
}

// AcquireReentrant takes key for value with ttl and the one hold hold if
// key is absent; if key holds value and has holds, it adds hold (unless it
// is there already) and makes the TTL at least ttl. It returns the lease's
// first fencing token (0 with NoFencing) and the number of holds after the
// call. One engine section over the key and its hold key. It returns
// engine.ErrInvalidTTL for a ttl <= 0 or a deadline out of range, and an
// error matching lockapi.ErrInvalidOption for an invalid hold
// (lockkeys.ValidHold), changing nothing.
func (b *Backend) AcquireReentrant(_ context.Context, key, value, hold string, ttl time.Duration) (fence int64, holds int, ok bool, err error) {
	if ttl <= 0 {
		return 0, 0, false, engine.ErrInvalidTTL
	}
	if err := lockkeys.CheckHold(hold); err != nil {
		return 0, 0, false, err
	}
	hk := lockkeys.Hold(key)
	b.e.Update([]string{key, hk}, func(tx *engine.Tx) {
		v, held := tx.Get(key)
		if !held {
			// SetNXPXFenced even without fencing: a bounded engine never
			// evicts the key it writes.
			if fence, _, err = tx.SetNXPXFenced(key, value, ttl); err != nil {
				return
			}
			if b.noFence {
				fence = 0
			}
			if _, err = tx.SetWith(hk, formatHolds(fence, []string{hold}), engine.SetArgs{TTL: ttl}); err != nil {
				tx.Del(key) // unreachable: SetNXPXFenced took the same TTL in this admitted section
				return
			}
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
		if !slices.Contains(ids, hold) {
			ids = append(ids, hold)
		}
		if err = extend(tx, key, hk, f, ids, ttl); err != nil {
			return
		}
		fence, holds, ok = f, len(ids), true
	})
	return fence, holds, ok, err
}

// extend stores the holds (fence f, IDs ids) and makes the TTL of key
// and of its holds at least ttl. The holds are written first: if that
// write fails (ErrOOM, in a section a memory bound did not admit, or a
// deadline out of range), nothing has changed.
func extend(tx *engine.Tx, key, hk string, f int64, ids []string, ttl time.Duration) error {
	at := tx.Now().Add(ttl)
	if cur, ok := tx.ExpireTime(key); ok && cur.After(at) {
		at = cur // ExpireGT below keeps the later deadline
	}
	if _, err := tx.SetWith(hk, formatHolds(f, ids), engine.SetArgs{At: at}); err != nil {
		return err
	}
	_, err := tx.PExpireCond(key, ttl, engine.ExpireGT)
	return err
}

// ReleaseReentrant removes hold if key holds value and hold is one of its
// holds, deleting the key (and its hold key) with the last one; holds is
// the number left. It returns an error matching lockapi.ErrInvalidOption
// for an empty hold or one not printable ASCII without spaces. A memory
// bound never refuses it: its section is not admitted
// (engine.UpdateAdmitted), as its writes only shrink the holds.
func (b *Backend) ReleaseReentrant(_ context.Context, key, value, hold string) (holds int, ok bool, err error) {
	if err := lockkeys.CheckHold(hold); err != nil {
		return 0, false, err
	}
	hk := lockkeys.Hold(key)
	b.e.UpdateAdmitted([]string{key, hk}, func(tx *engine.Tx) {
		f, ids, i := heldBy(tx, key, hk, value, hold)
		if i < 0 {
			return // released already, or a hold of an earlier lease
		}
		if ids = slices.Delete(ids, i, i+1); len(ids) > 0 {
			if _, err = tx.SetWith(hk, formatHolds(f, ids), engine.SetArgs{KeepTTL: true}); err != nil {
				return
			}
			holds, ok = len(ids), true
			return
		}
		tx.Del(key, hk)
		ok = true
	})
	return holds, ok, err
}

// heldBy returns key's holds and the index of hold among them, or i -1 if
// key does not hold value, is not held reentrantly, or hold is not one of
// its holds (it was released, or belongs to an earlier lease of the key).
func heldBy(tx *engine.Tx, key, hk, value, hold string) (fence int64, ids []string, i int) {
	if v, held := tx.Get(key); !held || v != value {
		return 0, nil, -1
	}
	h, hv := tx.Get(hk)
	f, ids, valid := parseHolds(h)
	if !hv || !valid {
		return 0, nil, -1
	}
	return f, ids, slices.Index(ids, hold)
}

// RefreshReentrant makes key's TTL at least ttl (never shorter: the other
// holds count on it) if key holds value and hold is one of its holds. It
// returns engine.ErrInvalidTTL for a ttl <= 0 or a deadline out of range,
// and an error matching lockapi.ErrInvalidOption for an invalid hold
// (lockkeys.ValidHold), changing nothing. A memory bound never refuses
// it: its section is not admitted (engine.UpdateAdmitted), as it rewrites
// the holds unchanged.
func (b *Backend) RefreshReentrant(_ context.Context, key, value, hold string, ttl time.Duration) (ok bool, err error) {
	if ttl <= 0 {
		return false, engine.ErrInvalidTTL
	}
	if err := lockkeys.CheckHold(hold); err != nil {
		return false, err
	}
	hk := lockkeys.Hold(key)
	b.e.UpdateAdmitted([]string{key, hk}, func(tx *engine.Tx) {
		f, ids, i := heldBy(tx, key, hk, value, hold)
		if i < 0 {
			return
		}
		if err = extend(tx, key, hk, f, ids, ttl); err == nil {
			ok = true
		}
	})
	return ok, err
}

// PTTLReentrant returns key's remaining TTL if key holds value and hold is
// one of its holds, in one engine section. It returns an error matching
// lockapi.ErrInvalidOption for an invalid hold (lockkeys.ValidHold).
func (b *Backend) PTTLReentrant(_ context.Context, key, value, hold string) (ttl time.Duration, ok bool, err error) {
	if err := lockkeys.CheckHold(hold); err != nil {
		return 0, false, err
	}
	hk := lockkeys.Hold(key)
	b.e.Update([]string{key, hk}, func(tx *engine.Tx) {
		if _, _, i := heldBy(tx, key, hk, value, hold); i >= 0 {
			ttl, ok = tx.PTTL(key)
		}
	})
	return ttl, ok, nil
}
