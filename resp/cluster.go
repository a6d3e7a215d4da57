package resp

// This file holds DUMP and RESTORE, which Redis keeps in cluster.c (with
// MIGRATE, which nxkv lacks); the payload format is rdb.go's.

import (
	"time"

	"github.com/nxkv/nxkv/engine"
)

// kindRestore is RESTORE's keyspace event.
const kindRestore engine.Kind = "restore"

func cmdDump(x *call) {
	key := x.key(1)
	x.locked([]string{key}, func(tx *engine.Tx) {
		if obj, ok := tx.Object(key); ok && obj != nil {
			x.w.bulk(dumpPayload("", obj))
			return
		}
		v, ok := tx.Get(key)
		if !ok {
			x.miss(key) // a read's miss, as Redis's lookupKeyRead
			x.w.null()
			return
		}
		x.w.bulk(dumpPayload(v, nil))
	})
}

func cmdRestore(x *call) {
	replace, absTTL, idle, freq := false, false, false, false
	for j := 4; j < len(x.args); j++ {
		more := len(x.args) - j - 1
		switch a := x.args[j]; {
		case equalFold(a, "replace"):
			replace = true
		case equalFold(a, "absttl"):
			absTTL = true
		case equalFold(a, "idletime") && more >= 1 && !freq:
			n, ok := x.intArg(j + 1)
			if !ok {
				return
			}
			if n < 0 {
				x.w.errorReply("ERR Invalid IDLETIME value, must be >= 0")
				return
			}
			idle = true
			j++
		case equalFold(a, "freq") && more >= 1 && !idle:
			n, ok := x.intArg(j + 1)
			if !ok {
				return
			}
			if n < 0 || n > 255 {
				x.w.errorReply("ERR Invalid FREQ value, must be >= 0 and <= 255")
				return
			}
			freq = true
			j++
		default:
			x.w.errorReply(errSyntax)
			return
		}
	}
	key := x.key(1)
	x.locked([]string{key}, func(tx *engine.Tx) {
		if !replace && tx.Exists(key) {
			x.w.errorReply("BUSYKEY Target key name already exists.")
			return
		}
		ttl, ok := x.intArg(2)
		if !ok {
			return
		}
		if ttl < 0 {
			x.w.errorReply("ERR Invalid TTL value, must be >= 0")
			return
		}
		p, ok := verifyPayload(x.args[3])
		if !ok {
			x.w.errorReply("ERR DUMP payload version or checksum are wrong")
			return
		}
		v, obj, err := x.s.loadPayload(p)
		if err != nil {
			x.w.errorReply("ERR Bad data format")
			return
		}
		var at time.Time
		if ttl > 0 {
			if !absTTL {
				if ttl > (1<<63-1)-tx.Now().UnixMilli() {
					x.w.errorReply(errBeyondRange)
					return
				}
				ttl += tx.Now().UnixMilli()
			}
			at = time.UnixMilli(ttl)
		}
		defer quietly(tx)()
		deleted := replace && tx.Del(key) > 0
		if !at.IsZero() && !at.After(tx.Now()) {
			// Already expired: nothing is created.
			if deleted {
				tx.Notify(key, engine.KindDel)
			}
			x.w.simple("OK")
			return
		}
		if obj != nil {
			tx.SetObject(key, obj, engine.KindNew)
		} else {
			_ = tx.Set(key, v)
			tx.Notify(key, engine.KindNew)
		}
		if !at.IsZero() {
			if _, err := tx.PExpireAtCond(key, at, engine.ExpireAlways); err != nil {
				tx.Del(key)
				x.w.errorReply(errBeyondRange)
				return
			}
		}
		tx.Notify(key, kindRestore)
		if obj != nil {
			x.signalReady(x.db, key)
		}
		x.w.simple("OK")
	})
}
