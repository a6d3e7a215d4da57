package resp

// This file holds Redis 8.4's compare-and-set family for strings, which
// lock clients adopt to renew and release without a script: DIGEST, SET's
// IFDEQ and IFDNE conditions (IFEQ and IFNE are SET's own options), DELEX
// and MSETEX. A digest is the XXH3 64-bit hash of a string value in 16
// hexadecimal digits, leading zeros kept; digests are compared without
// regard to case, and one of another length is refused, as Redis 8.4 does.
// The installed redis-server (7.0) lacks these commands, so their replies
// are checked against Redis 8.4's documented behaviour and its own tests.

import (
	"math"
	"strings"

	"github.com/zeebo/xxh3"

	"github.com/nxkv/nxkv/engine"
)

// errDigestLength is Redis's reply to an IFDEQ/IFDNE digest of the wrong
// length.
const errDigestLength = "ERR must be exactly 16 hexadecimal characters"

// digest returns the digest of value as DIGEST replies it.
func digest(value string) string {
	const hex = "0123456789abcdef"
	h := xxh3.HashString(value)
	var b [16]byte
	for i := 15; i >= 0; i-- {
		b[i] = hex[h&15]
		h >>= 4
	}
	return string(b[:])
}

// digestMatches compares value's digest with a client's, which must have
// 16 characters: it replies the error and returns ok false otherwise.
func (x *call) digestMatches(value string, d []byte) (equal, ok bool) {
	if len(d) != 16 {
		x.w.errorReply(errDigestLength)
		return false, false
	}
	return strings.EqualFold(digest(value), string(d)), true
}

// cmdDigest is DIGEST key: nil for a missing key.
func cmdDigest(x *call) {
	v, ok := x.getString(x.st, x.key(1))
	if !ok {
		return
	}
	x.w.bulkString(digest(v))
}

// setIfDigest is SET with IFDEQ or IFDNE: a missing key is written only
// under IFDNE (its digest is not checked); a present one when its digest
// equals (IFDEQ) or differs from (IFDNE) the client's. a holds SET's other
// options, parsed and checked.
func (x *call) setIfDigest(a engine.SetArgs, flags int, d []byte) {
	key, val := x.key(1), string(x.args[2])
	x.atomic([]string{key}, func(st store) {
		if x.wrongType(st, key) {
			return
		}
		old, exists := st.Get(key)
		write := flags&optIFDNE != 0
		if exists {
			eq, ok := x.digestMatches(old, d)
			if !ok {
				return
			}
			write = eq == (flags&optIFDEQ != 0)
		}
		if write {
			if _, err := st.SetWith(key, val, a); err != nil {
				x.engineErr(err)
				return
			}
		}
		switch {
		case flags&optGET != 0 && exists:
			x.w.bulkString(old)
		case flags&optGET != 0 || !write:
			x.w.null()
		default:
			x.w.simple("OK")
		}
	})
}

// cmdDelEx is DELEX key [IFEQ value | IFNE value | IFDEQ digest | IFDNE
// digest]: DEL of one key, or a delete only while the condition holds. A
// missing key replies 0 before the condition is read.
func cmdDelEx(x *call) {
	key := x.key(1)
	switch len(x.args) {
	case 2:
		x.w.int(int64(x.st.Del(key)))
		return
	case 4:
	default:
		x.w.errorReply("ERR wrong number of arguments for 'delex' command")
		return
	}
	cond, arg := x.args[2], x.args[3]
	if equalFold(cond, "ifeq") {
		// The lock release: one engine call, lock-free when it fails.
		switch {
		case x.st.CompareAndDelete(key, string(arg)):
			x.w.int(1)
		case isTyped(x.st.Type(key)):
			x.w.errorReply(errWrongType)
		default:
			x.w.int(0)
		}
		return
	}
	x.atomic([]string{key}, func(st store) {
		v, ok, wrong := stringOf(st, key)
		if wrong {
			x.w.errorReply(errWrongType)
			return
		}
		if !ok {
			x.w.int(0)
			return
		}
		var del bool
		switch {
		case equalFold(cond, "ifne"):
			del = v != string(arg)
		case equalFold(cond, "ifdeq"), equalFold(cond, "ifdne"):
			eq, ok := x.digestMatches(v, arg)
			if !ok {
				return
			}
			del = eq == equalFold(cond, "ifdeq")
		default:
			x.w.errorReply("ERR Invalid condition")
			return
		}
		if del {
			x.w.int(int64(st.Del(key)))
			return
		}
		x.w.int(0)
	})
}

// cmdMSetEX is MSETEX numkeys key value [key value ...] [NX | XX] [EX
// seconds | PX ms | EXAT unix-seconds | PXAT unix-ms | KEEPTTL], the
// options in any order: it sets every key with one expiration, or, when
// NX finds a key present or XX finds one missing, none. It replies 1 when
// it set them and 0 when it did not.
func cmdMSetEX(x *call) {
	n, ok := parseInt(x.args[1])
	if !ok || n <= 0 || n > math.MaxInt32 {
		x.w.errorReply("ERR invalid numkeys value")
		return
	}
	if n > int64(len(x.args)-2)/2 {
		x.w.errorReply("ERR wrong number of key-value pairs")
		return
	}
	from := 2 + 2*int(n)
	var flags, expire int
	for j := from; j < len(x.args); j++ {
		opt := x.args[j]
		next := j+1 < len(x.args)
		switch {
		case equalFold(opt, "nx") && flags&(optNX|optXX) == 0:
			flags |= optNX
		case equalFold(opt, "xx") && flags&(optNX|optXX) == 0:
			flags |= optXX
		case equalFold(opt, "keepttl") && flags&(optExpire|optKEEPTTL) == 0:
			flags |= optKEEPTTL
		case next && flags&(optExpire|optKEEPTTL) == 0 && msetexExpire(opt) != 0:
			flags |= msetexExpire(opt)
			expire = j + 1
			j++
		default:
			x.w.errorReply(errSyntax)
			return
		}
	}
	a, ok := x.setArgs(expire, flags)
	if !ok {
		return
	}
	keys := x.keysOf(2, 2)[:n]
	x.atomic(keys, func(st store) {
		if flags&(optNX|optXX) != 0 {
			for _, k := range keys {
				if st.Exists(k) != (flags&optXX != 0) {
					x.w.int(0)
					return
				}
			}
		}
		for i, k := range keys {
			if _, err := st.SetWith(k, string(x.args[3+2*i]), a); err != nil {
				x.engineErr(err) // a checked deadline is always valid
				return
			}
		}
		x.w.int(1)
	})
}

// msetexExpire returns the expire flag an option names, or 0.
func msetexExpire(opt []byte) int {
	switch {
	case equalFold(opt, "ex"):
		return optEX
	case equalFold(opt, "px"):
		return optPX
	case equalFold(opt, "exat"):
		return optEXAT
	case equalFold(opt, "pxat"):
		return optPXAT
	}
	return 0
}
