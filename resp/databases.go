package resp

// This file holds the database commands, as Redis's db.c: SELECT, DBSIZE,
// SWAPDB, FLUSHDB and FLUSHALL.

import (
	"math"
	"time"

	"github.com/nxkv/nxkv/engine"
)

// cmdSelect changes the database of the client, or only of the running
// script inside Lua (as Redis 7 does).
func cmdSelect(x *call) {
	n, ok := x.dbIndexArg(1)
	if !ok {
		return
	}
	if x.tx {
		st := x.txs.get(n)
		if st == nil {
			x.w.errorReply("ERR nxkv: this transaction does not hold that database")
			return
		}
		x.st = st
	} else {
		x.st = x.s.store(n)
	}
	x.db = n
	if x.lua != nil {
		x.lua.db, x.lua.st = n, x.st
	} else {
		x.c.setDB(n)
	}
	x.w.simple("OK")
}

func cmdDBSize(x *call) {
	if !x.tx {
		x.w.int(int64(x.s.DB(x.db).LenAll()))
		return
	}
	n := 0
	x.st.RangeAll(func(string) bool { n++; return true })
	x.w.int(int64(n))
}

// cmdFlushDB is FLUSHDB and FLUSHALL [ASYNC|SYNC]; both flush at once.
func cmdFlushDB(x *call) {
	if len(x.args) > 2 || (len(x.args) == 2 && !equalFold(x.args[1], "async") && !equalFold(x.args[1], "sync")) {
		x.w.errorReply(errSyntax)
		return
	}
	if x.cmd.name == "flushdb" {
		x.flushDB(x.db)
	} else {
		for i := range Databases {
			x.flushDB(i)
		}
	}
	x.s.trackingFlushed(x.c)
	x.w.simple("OK")
}

// flushDB deletes every key of database i. A flush publishes no keyspace
// event, as in Redis; the command invalidates client-side caches once.
func (x *call) flushDB(i int) {
	if x.tx {
		if st := x.txs.get(i); st != nil {
			st.FlushAll() // the transaction holds the whole database
		}
		return
	}
	if e := x.s.existingDB(i); e != nil {
		updateBy(x.c, e, nil, func(st store) { st.FlushAll() })
	}
}

// cmdSwapDB is SWAPDB index1 index2: the two databases exchange their
// keys, atomically against every other client. The databases are engines,
// and database 0 may be the caller's own (Options.Engine), which Go code
// reaches directly: so the keys, with their values and deadlines, move from
// one engine to the other in one section holding both (O(N) in the keys of
// both, where Redis swaps two pointers). Every key that exists in either
// database changes, so WATCH and the engines' watchers see each such key
// touched, as Redis's SWAPDB touches them. It publishes no keyspace event
// and, as in Redis 7.0, invalidates no client-side cache.
func cmdSwapDB(x *call) {
	a, ok := x.swapIndexArg(1, "ERR invalid first DB index")
	if !ok {
		return
	}
	b, ok := x.swapIndexArg(2, "ERR invalid second DB index")
	if !ok {
		return
	}
	if a < 0 || a >= Databases || b < 0 || b >= Databases {
		x.w.errorReply(errDBRange)
		return
	}
	if a != b {
		swap := func(t *txSet) { swapStores(t.get(a), t.get(b)) }
		defer x.signalWaited(a, b)
		if x.tx {
			swap(x.txs) // cmdExec and cmdEval hold every database for allDBs
		} else {
			x.s.section(x.c, []int{min(a, b), max(a, b)}, swap)
		}
	}
	x.w.simple("OK")
}

// swapIndexArg parses argument i as Redis's getIntFromObjectOrReply with
// a message of its own.
func (x *call) swapIndexArg(i int, msg string) (int, bool) {
	n, ok := parseInt(x.args[i])
	if !ok || n < math.MinInt32 || n > math.MaxInt32 {
		x.w.errorReply(msg)
		return 0, false
	}
	return int(n), true
}

// swapStores exchanges the live keys of two databases held by one
// section, with their values and deadlines.
func swapStores(a, b store) {
	defer quietly(a)()
	defer quietly(b)()
	ea, eb := snapshot(a), snapshot(b)
	clearStore(a, ea)
	clearStore(b, eb)
	restore(a, eb)
	restore(b, ea)
}

// storedKey is a key with its value (a string, or obj), deadline (zero:
// none) and whether it is a held lock (engine.Tx.Held), which maxmemory
// never evicts in either database.
type storedKey struct {
	key, value string
	obj        engine.Object
	at         time.Time
	held       bool
}

// snapshot returns the live keys of st with their values and deadlines.
func snapshot(st store) []storedKey {
	var out []storedKey
	st.RangeAll(func(k string) bool {
		v, _ := st.Get(k)
		at, _ := st.ExpireTime(k)
		var obj engine.Object
		held := false
		if o, ok := st.(objects); ok {
			obj, _ = o.Object(k)
			held = o.Held(k)
		}
		out = append(out, storedKey{key: k, value: v, obj: obj, at: at, held: held})
		return true
	})
	return out
}

// clearStore deletes the keys of es from st.
func clearStore(st store, es []storedKey) {
	keys := make([]string, len(es))
	for i, e := range es {
		keys[i] = e.key
	}
	st.Del(keys...)
}

// restore writes es into st, a section no memory bound refuses (the
// server's sections are unadmitted: SWAPDB is not deny-oom), so every
// write stores.
func restore(st store, es []storedKey) {
	for _, e := range es {
		if e.obj != nil {
			st.(objects).SetObject(e.key, e.obj, engine.KindNew)
			if !e.at.IsZero() {
				_, _ = st.PExpireAtCond(e.key, e.at, engine.ExpireAlways)
			}
			continue
		}
		if e.at.IsZero() {
			_ = st.Set(e.key, e.value)
		} else if _, err := st.SetWith(e.key, e.value, engine.SetArgs{At: e.at}); err != nil {
			_ = st.Set(e.key, e.value) // a deadline the engine held is always valid
		}
		if e.held {
			st.(objects).Hold(e.key)
		}
	}
}
