package resp

// This file holds the expiry commands, as Redis's expire.c: EXPIRE,
// PEXPIRE, EXPIREAT, PEXPIREAT (NX XX GT LT), TTL, PTTL, EXPIRETIME,
// PEXPIRETIME and PERSIST.

import (
	"math"

	"github.com/nxkv/nxkv/engine"
)

// EXPIRE condition flags.
const (
	expNX = 1 << iota
	expXX
	expGT
	expLT
)

// cmdExpire is EXPIRE, PEXPIRE, EXPIREAT and PEXPIREAT, checked in Redis's
// order: options, the integer, overflow, then the key and its condition.
// The deadline is computed in milliseconds from the section's frozen time;
// one at or before now deletes the key (1).
func cmdExpire(x *call) {
	flags := 0
	for _, opt := range x.args[3:] {
		switch {
		case equalFold(opt, "nx"):
			flags |= expNX
		case equalFold(opt, "xx"):
			flags |= expXX
		case equalFold(opt, "gt"):
			flags |= expGT
		case equalFold(opt, "lt"):
			flags |= expLT
		default:
			x.w.errorReply("ERR Unsupported option " + sanitize(string(opt)))
			return
		}
	}
	if flags&expNX != 0 && flags&(expXX|expGT|expLT) != 0 {
		x.w.errorReply("ERR NX and XX, GT or LT options at the same time are not compatible")
		return
	}
	if flags&expGT != 0 && flags&expLT != 0 {
		x.w.errorReply("ERR GT and LT options at the same time are not compatible")
		return
	}
	when, ok := x.intArg(2)
	if !ok {
		return
	}
	name := x.cmd.name
	if name == "expire" || name == "expireat" {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			x.invalidExpire()
			return
		}
		when *= 1000
	}
	relative := name == "expire" || name == "pexpire"
	key := x.key(1)
	x.atomic([]string{key}, func(st store) {
		now := unixMs(st.Now())
		if relative {
			if when > math.MaxInt64-now {
				x.invalidExpire()
				return
			}
			when += now
		}
		at, ok := st.ExpireTime(key)
		if !ok {
			x.w.int(0)
			return
		}
		cur := int64(-1)
		if !at.IsZero() {
			cur = unixMs(at)
		}
		if (flags&expNX != 0 && cur != -1) ||
			(flags&expXX != 0 && cur == -1) ||
			(flags&expGT != 0 && (cur == -1 || when <= cur)) ||
			(flags&expLT != 0 && cur != -1 && when >= cur) {
			x.w.int(0)
			return
		}
		if when <= now {
			st.Del(key)
			x.w.int(1)
			return
		}
		if when > maxEngineMs {
			x.w.errorReply(errBeyondRange)
			return
		}
		if x.ownEvents() {
			// Redis replies before it notifies a new deadline (not a
			// deletion): a client that receives its own events sees so.
			x.w.int(1)
			_, _ = st.PExpireAtCond(key, msTime(when), engine.ExpireAlways) // checked above
			return
		}
		if _, err := st.PExpireAtCond(key, msTime(when), engine.ExpireAlways); err != nil {
			x.engineErr(err)
			return
		}
		x.w.int(1)
	})
}

// cmdTTL is TTL and PTTL: -2 for a missing key, -1 without a deadline.
// The remaining time is counted in whole milliseconds as Redis counts it
// (the deadline's millisecond less the current one), from the deadline and
// the time of one atomic read; TTL rounds it to seconds as Redis does.
func cmdTTL(x *call) {
	key := x.key(1)
	x.atomic([]string{key}, func(st store) {
		at, ok := st.ExpireTime(key)
		switch {
		case !ok:
			x.miss(key)
			x.w.int(-2)
		case at.IsZero():
			x.w.int(-1)
		case x.cmd.name == "pttl":
			x.w.int(max(msLeft(at, st.Now()), 0))
		default:
			x.w.int((max(msLeft(at, st.Now()), 0) + 500) / 1000)
		}
	})
}

// cmdExpireTime is EXPIRETIME and PEXPIRETIME.
func cmdExpireTime(x *call) {
	at, ok := x.st.ExpireTime(x.key(1))
	switch {
	case !ok:
		x.miss(x.key(1))
		x.w.int(-2)
	case at.IsZero():
		x.w.int(-1)
	case x.cmd.name == "pexpiretime":
		x.w.int(unixMs(at))
	default:
		x.w.int((unixMs(at) + 500) / 1000)
	}
}

func cmdPersist(x *call) {
	if x.st.Persist(x.key(1)) {
		x.w.int(1)
	} else {
		x.w.int(0)
	}
}
