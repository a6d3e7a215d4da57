package resp

// This file holds the hash type and its commands, as Redis's t_hash.c:
// HSET, HSETNX, HGET, HMGET, HMSET, HDEL, HEXISTS, HLEN, HSTRLEN, HINCRBY,
// HINCRBYFLOAT, HKEYS, HVALS, HGETALL, HSCAN and HRANDFIELD.
//
// A hash is a dense table of fields to values (dense.go): a listpack while
// it has at most hash-max-listpack-entries fields and no field or value
// longer than hash-max-listpack-value bytes, in insertion order as Redis's
// listpack replies; a hash table once past either, for good. The package
// doc gives the measured costs per field.

import (
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/nxkv/nxkv/engine"
)

// hashObj is a hash value.
type hashObj struct{ d dense[string] }

func (h *hashObj) Type() string { return "hash" }

func (h *hashObj) encoding() string {
	if h.d.indexed() {
		return "hashtable"
	}
	return "listpack"
}

func (h *hashObj) clone() engine.Object { return &hashObj{d: *h.d.clone()} }

func (h *hashObj) size() int { return denseSize(&h.d, 16, func(i int) int { return len(h.d.vals[i]) }) }

// Size is size from sampled fields (engine.Sizer).
func (h *hashObj) Size() int64 {
	return sampledSize(32*cap(h.d.keys)+32*len(h.d.idx), h.d.len(), 0,
		func(i int) int { return len(h.d.keys[i]) + len(h.d.vals[i]) })
}

func (h *hashObj) scanPage(cursor uint64, count int) ([]string, int, uint64) {
	items, next := pageOf(&h.d, cursor, count, func(out []string, i int) []string {
		return append(out, h.d.keys[i], h.d.vals[i])
	})
	return items, 2, next
}

// fits converts h to a hash table if a string of n bytes is too long for
// its listpack.
func (h *hashObj) fits(s *Server, n int) {
	if !h.d.indexed() && int64(n) > s.limit(limitHashValue) {
		h.d.index()
	}
}

// set sets field to value and reports whether the field is new,
// converting h to a hash table past the listpack's limits.
func (h *hashObj) set(s *Server, field, value string) bool {
	h.fits(s, len(field))
	h.fits(s, len(value))
	added := h.d.put(field, value)
	if !h.d.indexed() && int64(h.d.len()) > s.limit(limitHashEntries) {
		h.d.index()
	}
	return added
}

// hashEvent reports a change of hash h under key: it stores h if the
// command created it, and names the change.
func hashEvent(tx *engine.Tx, key string, h *hashObj, created bool, kind engine.Kind) {
	if created {
		tx.SetObject(key, h, kind)
	} else {
		tx.Notify(key, kind)
	}
}

// writeHash runs fn with the hash under argument 1, created (and not yet
// stored) when absent, unless the key holds another type.
func (x *call) writeHash(fn func(tx *engine.Tx, key string, h *hashObj, created bool)) {
	key := x.key(1)
	x.locked([]string{key}, func(tx *engine.Tx) {
		h, ok := typed[*hashObj](x, tx, key)
		if !ok {
			return
		}
		created := h == nil
		if created {
			h = &hashObj{}
		}
		fn(tx, key, h, created)
	})
}

// cmdHSet is HSET and HMSET.
func cmdHSet(x *call) {
	if len(x.args)%2 == 1 {
		x.w.errorReply("ERR wrong number of arguments for '" + x.cmd.name + "' command")
		return
	}
	x.writeHash(func(tx *engine.Tx, key string, h *hashObj, created bool) {
		for _, a := range x.args[2:] {
			h.fits(x.s, len(a))
		}
		added := 0
		for i := 2; i < len(x.args); i += 2 {
			if h.set(x.s, string(x.args[i]), string(x.args[i+1])) {
				added++
			}
		}
		hashEvent(tx, key, h, created, "hset")
		if x.cmd.name == "hmset" {
			x.w.simple("OK")
		} else {
			x.w.int(int64(added))
		}
	})
}

func cmdHSetNX(x *call) {
	key, field := x.key(1), string(x.args[2])
	x.locked([]string{key}, func(tx *engine.Tx) {
		h, ok := typed[*hashObj](x, tx, key)
		if !ok {
			return
		}
		if h != nil && h.d.find(field) >= 0 {
			x.w.int(0)
			return
		}
		created := h == nil
		if created {
			h = &hashObj{}
		}
		h.set(x.s, field, string(x.args[3]))
		hashEvent(tx, key, h, created, "hset")
		x.w.int(1)
	})
}

// readHash runs fn with key's hash (nil if absent) unless key holds
// another type.
func (x *call) readHash(fn func(h *hashObj)) {
	key := x.key(1)
	x.locked([]string{key}, func(tx *engine.Tx) {
		if h, ok := typed[*hashObj](x, tx, key); ok {
			fn(h)
		}
	})
}

func cmdHGet(x *call) {
	x.readHash(func(h *hashObj) {
		if h != nil {
			if v, ok := h.d.get(string(x.args[2])); ok {
				x.w.bulkString(v)
				return
			}
		}
		x.w.null()
	})
}

func cmdHMGet(x *call) {
	x.readHash(func(h *hashObj) {
		x.w.array(len(x.args) - 2)
		for _, f := range x.args[2:] {
			if h != nil {
				if v, ok := h.d.get(string(f)); ok {
					x.w.bulkString(v)
					continue
				}
			}
			x.w.null()
		}
	})
}

func cmdHDel(x *call) {
	key := x.key(1)
	x.locked([]string{key}, func(tx *engine.Tx) {
		h, ok := typed[*hashObj](x, tx, key)
		if ok {
			x.removeMembers(tx, key, h == nil, func(f string) bool { return h.d.del(f) }, func() int { return h.d.len() }, "hdel")
		}
	})
}

func cmdHLen(x *call) {
	x.readHash(func(h *hashObj) {
		if h == nil {
			x.w.int(0)
			return
		}
		x.w.int(int64(h.d.len()))
	})
}

func cmdHStrlen(x *call) {
	x.readHash(func(h *hashObj) {
		v := ""
		if h != nil {
			v, _ = h.d.get(string(x.args[2]))
		}
		x.w.int(int64(len(v)))
	})
}

func cmdHExists(x *call) {
	x.readHash(func(h *hashObj) {
		if h != nil && h.d.find(string(x.args[2])) >= 0 {
			x.w.int(1)
			return
		}
		x.w.int(0)
	})
}

func cmdHIncrBy(x *call) {
	incr, ok := x.intArg(3)
	if !ok {
		return
	}
	field := string(x.args[2])
	x.writeHash(func(tx *engine.Tx, key string, h *hashObj, created bool) {
		var cur int64
		if v, ok := h.d.get(field); ok {
			if cur, ok = parseInt([]byte(v)); !ok {
				x.w.errorReply("ERR hash value is not an integer")
				return
			}
		}
		if (incr < 0 && cur < 0 && incr < math.MinInt64-cur) || (incr > 0 && cur > 0 && incr > math.MaxInt64-cur) {
			x.w.errorReply("ERR increment or decrement would overflow")
			return
		}
		cur += incr
		h.set(x.s, field, strconv.FormatInt(cur, 10))
		hashEvent(tx, key, h, created, "hincrby")
		x.w.int(cur)
	})
}

func cmdHIncrByFloat(x *call) {
	incr, ok := parseLongDouble(x.args[3])
	if !ok {
		x.w.errorReply(errNotFloat)
		return
	}
	if incr.inf != 0 {
		x.w.errorReply("ERR value is NaN or Infinity")
		return
	}
	field := string(x.args[2])
	x.writeHash(func(tx *engine.Tx, key string, h *hashObj, created bool) {
		cur := zeroLongDouble()
		if v, ok := h.d.get(field); ok {
			if cur, ok = parseLongDouble([]byte(v)); !ok {
				x.w.errorReply("ERR hash value is not a float")
				return
			}
		}
		s, ok := x.addFloat(cur, incr)
		if !ok {
			return
		}
		h.set(x.s, field, s)
		hashEvent(tx, key, h, created, "hincrbyfloat")
		x.w.bulkString(s)
	})
}

// cmdHGetAll is HGETALL, HKEYS and HVALS.
func cmdHGetAll(x *call) {
	keys, vals := x.cmd.name != "hvals", x.cmd.name != "hkeys"
	x.readHash(func(h *hashObj) {
		n := 0
		if h != nil {
			n = h.d.len()
		}
		if keys && vals {
			x.w.mapHeader(n)
		} else {
			x.w.array(n)
		}
		for i := range n {
			if keys {
				x.w.bulkString(h.d.keys[i])
			}
			if vals {
				x.w.bulkString(h.d.vals[i])
			}
		}
	})
}

// cmdHScan is HSCAN key cursor [MATCH pattern] [COUNT count].
func cmdHScan(x *call) {
	x.scanTyped(func(tx *engine.Tx, key string) (scanned, bool) {
		h, ok := typed[*hashObj](x, tx, key)
		if h == nil {
			return nil, ok
		}
		return h, true
	})
}

// cmdHRandField is HRANDFIELD key [count [WITHVALUES]].
func cmdHRandField(x *call) {
	if len(x.args) == 2 {
		x.readHash(func(h *hashObj) {
			if h == nil {
				x.w.null()
				return
			}
			x.w.bulkString(h.d.keys[rand.IntN(h.d.len())])
		})
		return
	}
	count, withValues, ok := x.randCountArgs("withvalues")
	if !ok {
		return
	}
	x.readHash(func(h *hashObj) {
		if h == nil {
			x.w.array(0)
			return
		}
		x.randomPick(h.d.len(), count, withValues, func(i int) {
			if withValues && x.w.resp3() {
				x.w.array(2)
			}
			x.w.bulkString(h.d.keys[i])
			if withValues {
				x.w.bulkString(h.d.vals[i])
			}
		})
	})
}
