package resp

// This file holds the generic key commands, as Redis's db.c: DEL, UNLINK,
// EXISTS, TYPE, KEYS, SCAN, RANDOMKEY, RENAME, RENAMENX, COPY and MOVE.

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/nxkv/nxkv/engine"
)

func cmdDel(x *call) {
	if len(x.args) == 2 {
		x.w.int(int64(x.st.Del(x.key(1))))
		return
	}
	x.w.int(int64(x.st.Del(x.keysOf(1, 1)...)))
}

// cmdExists counts the arguments that exist (a key named twice counts
// twice), atomically.
func cmdExists(x *call) {
	if len(x.args) == 2 {
		if x.st.Exists(x.key(1)) {
			x.w.int(1)
		} else {
			x.miss(x.key(1))
			x.w.int(0)
		}
		return
	}
	keys := x.keysOf(1, 1)
	x.atomic(keys, func(st store) {
		n := 0
		for _, k := range keys {
			if st.Exists(k) {
				n++
			} else {
				x.miss(k)
			}
		}
		x.w.int(int64(n))
	})
}

func cmdType(x *call) {
	t := x.st.Type(x.key(1))
	if t == engine.TypeNone {
		x.miss(x.key(1))
	}
	x.w.simple(t)
}

// cmdKeys lists the keys matching a pattern, atomically (the whole
// database is locked while it is read, as Redis blocks while it runs).
func cmdKeys(x *call) {
	pat := string(x.args[1])
	all := pat == "*"
	var keys []string
	x.atomic(nil, func(st store) {
		st.RangeAll(func(k string) bool {
			if all || globMatch(pat, k) {
				keys = append(keys, k)
			}
			return true
		})
	})
	x.w.array(len(keys))
	for _, k := range keys {
		x.w.bulkString(k)
	}
}

// parseCursor parses a SCAN cursor as Redis does (strtoul: digits with an
// optional sign, a negative value wrapping around).
func parseCursor(b []byte) (uint64, bool) {
	s := string(b)
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// scanOptions parses SCAN's options from argument from on: COUNT (10 by
// default, at least 1), MATCH (usePat false for "*") and, for the
// keyspace's SCAN only, TYPE; ok is false after replying the error.
func (x *call) scanOptions(from int, keyspace bool) (count int64, pat string, usePat bool, typ string, ok bool) {
	count = 10
	for i := from; i < len(x.args); {
		more := len(x.args) - i
		switch {
		case equalFold(x.args[i], "count") && more >= 2:
			n, ok := parseInt(x.args[i+1])
			if !ok {
				x.w.errorReply(errNotInteger)
				return 0, "", false, "", false
			}
			if n < 1 {
				x.w.errorReply(errSyntax)
				return 0, "", false, "", false
			}
			count = n
			i += 2
		case equalFold(x.args[i], "match") && more >= 2:
			pat = string(x.args[i+1])
			usePat = pat != "*"
			i += 2
		case keyspace && equalFold(x.args[i], "type") && more >= 2:
			typ = string(x.args[i+1])
			i += 2
		default:
			x.w.errorReply(errSyntax)
			return 0, "", false, "", false
		}
	}
	return count, pat, usePat, typ, true
}

// cmdScan is SCAN cursor [MATCH pattern] [COUNT n] [TYPE type]. The cursor
// walks the engine's shards; every key present for the whole iteration is
// returned at least once, as Redis guarantees. Inside a transaction one
// call returns every key with cursor 0.
func cmdScan(x *call) {
	cursor, ok := parseCursor(x.args[1])
	if !ok {
		x.w.errorReply("ERR invalid cursor")
		return
	}
	count, pat, usePat, typ, ok := x.scanOptions(2, true)
	if !ok {
		return
	}
	var keys []string
	add := func(st store, k string) {
		if !usePat || globMatch(pat, k) {
			if typ == "" || strings.EqualFold(typ, st.Type(k)) {
				keys = append(keys, k)
			}
		}
	}
	next := uint64(0)
	if x.tx {
		x.st.RangeAll(func(k string) bool { add(x.st, k); return true })
	} else {
		e := x.s.DB(x.db)
		visited := int64(0)
		next = cursor
		for {
			next = scan(e, next, func(k string) { visited++; add(e, k) })
			if next == 0 || visited >= count {
				break
			}
		}
	}
	x.w.array(2)
	x.w.bulkString(strconv.FormatUint(next, 10))
	x.w.array(len(keys))
	for _, k := range keys {
		x.w.bulkString(k)
	}
}

// moveValue copies key's value (of any type: COPY copies a typed value,
// RENAME and MOVE move it) and deadline from src to dst (as key dkey),
// deleting it from src unless keep. The key is known to exist in src. Its
// callers' sections are quiet and name the changes as Redis does.
func moveValue(src store, key string, dst store, dkey string, keep bool) {
	at, _ := src.ExpireTime(key)
	if so, ok := src.(objects); ok {
		if obj, _ := so.Object(key); obj != nil {
			if keep {
				obj = obj.(copier).clone()
			} else {
				src.Del(key)
			}
			dst.(objects).SetObject(dkey, obj, engine.KindNew)
			if !at.IsZero() {
				_, _ = dst.PExpireAtCond(dkey, at, engine.ExpireAlways)
			}
			return
		}
	}
	v, _ := src.Get(key)
	if !keep {
		src.Del(key)
	}
	if at.IsZero() {
		dst.Set(dkey, v)
		return
	}
	if _, err := dst.SetWith(dkey, v, engine.SetArgs{At: at}); err != nil {
		// A deadline the engine held is always valid; keep the value.
		dst.Set(dkey, v)
	}
}

// cmdRename is RENAME and RENAMENX; the value keeps its deadline.
func cmdRename(x *call) {
	nx := x.cmd.name == "renamenx"
	src, dst := x.key(1), x.key(2)
	x.atomic([]string{src, dst}, func(st store) {
		if !st.Exists(src) {
			x.w.errorReply(errNoSuchKey)
			return
		}
		if src == dst {
			if nx {
				x.w.int(0)
			} else {
				x.w.simple("OK")
			}
			return
		}
		if nx && st.Exists(dst) {
			x.w.int(0)
			return
		}
		defer quietly(st)()
		st.Del(dst)
		moveValue(st, src, st, dst, false)
		notify(st, dst, engine.KindNew)
		notify(st, src, engine.KindRenameFrom)
		notify(st, dst, engine.KindRenameTo)
		x.signalReady(x.db, dst)
		if nx {
			x.w.int(1)
		} else {
			x.w.simple("OK")
		}
	})
}

// cmdCopy is COPY source destination [DB index] [REPLACE].
func cmdCopy(x *call) {
	replace := false
	dstDB := x.db
	for j := 3; j < len(x.args); j++ {
		switch {
		case equalFold(x.args[j], "replace"):
			replace = true
		case equalFold(x.args[j], "db") && j < len(x.args)-1:
			n, ok := x.dbIndexArg(j + 1)
			if !ok {
				return
			}
			dstDB = n
			j++
		default:
			x.w.errorReply(errSyntax)
			return
		}
	}
	src, dst := x.key(1), x.key(2)
	if dstDB == x.db && src == dst {
		x.w.errorReply(errSameObject)
		return
	}
	x.atomic2(x.db, src, dstDB, dst, func(s, d store) {
		if !s.Exists(src) {
			x.miss(src)
			x.w.int(0)
			return
		}
		if d.Exists(dst) && !replace {
			x.w.int(0)
			return
		}
		defer quietly(d)()
		d.Del(dst)
		moveValue(s, src, d, dst, true)
		notify(d, dst, engine.KindNew)
		notify(d, dst, engine.KindCopyTo)
		x.signalReady(dstDB, dst)
		x.w.int(1)
	})
}

// dbIndexArg parses a database index as Redis's getIntFromObjectOrReply
// and range check, replying the error on failure.
func (x *call) dbIndexArg(i int) (int, bool) {
	n, ok := x.intArg(i)
	if !ok {
		return 0, false
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		x.w.errorReply("ERR value is out of range, value must between -2147483648 and 2147483647")
		return 0, false
	}
	if n < 0 || n >= Databases {
		x.w.errorReply(errDBRange)
		return 0, false
	}
	return int(n), true
}

// cmdMove is MOVE key db.
func cmdMove(x *call) {
	dstDB, ok := x.dbIndexArg(2)
	if !ok {
		return
	}
	if dstDB == x.db {
		x.w.errorReply(errSameObject)
		return
	}
	key := x.key(1)
	x.atomic2(x.db, key, dstDB, key, func(s, d store) {
		if !s.Exists(key) || d.Exists(key) {
			x.w.int(0)
			return
		}
		defer quietly(s)()
		defer quietly(d)()
		moveValue(s, key, d, key, false)
		notify(d, key, engine.KindNew)
		notify(s, key, engine.KindMoveFrom)
		notify(d, key, engine.KindMoveTo)
		x.signalReady(dstDB, key)
		x.w.int(1)
	})
}

// atomic2 runs fn with key ka of database da and key kb of database db
// locked together (nested in database order, so two of them never
// deadlock); inside a transaction it runs at once on the databases held.
func (x *call) atomic2(da int, ka string, db int, kb string, fn func(a, b store)) {
	if x.tx {
		a, b := x.txs.get(da), x.txs.get(db)
		if a == nil || b == nil {
			x.w.errorReply("ERR nxkv: this transaction does not hold that database")
			return
		}
		fn(a, b)
		return
	}
	if da == db {
		updateBy(x.c, x.s.DB(da), []string{ka, kb}, func(st store) { fn(st, st) })
		return
	}
	lo, klo, hi, khi := da, ka, db, kb
	if lo > hi {
		lo, klo, hi, khi = hi, khi, lo, klo
	}
	updateBy(x.c, x.s.DB(lo), []string{klo}, func(stLo store) {
		updateBy(x.c, x.s.DB(hi), []string{khi}, func(stHi store) {
			if da == lo {
				fn(stLo, stHi)
			} else {
				fn(stHi, stLo)
			}
		})
	})
}

// cmdRandomKey is RANDOMKEY: a live key of the database chosen at random,
// or nil when it has none. Outside a transaction it takes the keys of one
// shard at a time, from a random one on, and picks one of the first shard
// that has any (so a key's chance depends on how full its shard is, as a
// key's chance in Redis depends on its hash table bucket); inside one it
// samples every key.
func cmdRandomKey(x *call) {
	if x.tx {
		var pick string
		n := 0
		x.st.RangeAll(func(k string) bool {
			n++
			if rand.IntN(n) == 0 {
				pick = k
			}
			return true
		})
		if n == 0 {
			x.w.null()
			return
		}
		x.w.bulkString(pick)
		return
	}
	e := x.s.DB(x.db)
	cur, first := rand.Uint64(), uint64(0)
	for i := 0; ; i++ {
		var keys []string
		next := e.ScanAll(cur, func(k string) { keys = append(keys, k) })
		if len(keys) > 0 {
			x.w.bulkString(keys[rand.IntN(len(keys))])
			return
		}
		if i == 0 {
			first = next
		} else if next == first {
			break // every shard visited
		}
		cur = next
	}
	x.w.null()
}
