package resp

import (
	"math"
	"math/bits"
	"unsafe"

	"github.com/nxkv/nxkv/engine"
)

// This file is the bitmap commands, as Redis's bitops.c: SETBIT, GETBIT,
// BITCOUNT, BITPOS, BITOP, BITFIELD and BITFIELD_RO, over string values
// read as arrays of bits, the first byte's most significant bit first.
// A missing key reads as an endless run of zero bits; a write past a
// value's end grows it with zero bytes, and creates a missing key.
//
// nxkv's strings are immutable, so a write copies the value: SETBIT and
// BITFIELD cost O(N) in the value's length where Redis's cost O(1).

// errBitOffset is Redis's reply to a bad bit offset.
const errBitOffset = "ERR bit offset is not an integer or out of range"

// bitOffset parses argument i as a bit offset, as Redis's
// getBitOffsetFromArgument: an integer from 0 to the last bit of the
// largest string; with width > 0 (BITFIELD), "#n" means n*width. It
// replies the error when the offset is bad.
func (x *call) bitOffset(i int, width int) (uint64, bool) {
	p := x.args[i]
	hash := width > 0 && len(p) > 0 && p[0] == '#'
	if hash {
		p = p[1:]
	}
	n, ok := parseInt(p)
	if ok && hash {
		n *= int64(width) // wraps as Redis's does
	}
	if !ok || n < 0 || n>>3 >= int64(x.s.maxBulk()) {
		x.w.errorReply(errBitOffset)
		return 0, false
	}
	return uint64(n), true
}

// bitAt returns bit i of v (0 past its end).
func bitAt(v string, i uint64) int {
	if i>>3 >= uint64(len(v)) {
		return 0
	}
	return int(v[i>>3]>>(7-i&7)) & 1
}

// grown returns a copy of v at least n bytes long, padded with zero bytes.
func grown(v string, n uint64) []byte {
	b := make([]byte, max(uint64(len(v)), n))
	copy(b, v)
	return b
}

// frozen returns b as a string without copying it: b must be a buffer
// the caller made and never changes again.
func frozen(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// storeBits stores a bit command's result b under key, with the event
// setbit when changed is true. Otherwise the command only created or grew
// the value (BITFIELD whose every write overflowed with FAIL): Redis then
// publishes the creation only, and a grown value nothing.
func storeBits(st store, key string, b []byte, exists, changed bool) {
	if changed {
		storeString(st, key, frozen(b), exists, engine.KindSetBit)
		return
	}
	defer quietly(st)()
	if exists {
		_, _ = st.SetWith(key, frozen(b), engine.SetArgs{KeepTTL: true})
		return
	}
	st.Set(key, frozen(b))
	notify(st, key, engine.KindNew)
}

func cmdSetBit(x *call) {
	off, ok := x.bitOffset(2, 0)
	if !ok {
		return
	}
	on, ok := parseInt(x.args[3])
	if !ok || on&^1 != 0 {
		x.w.errorReply("ERR bit is not an integer or out of range")
		return
	}
	key := x.key(1)
	x.atomic([]string{key}, func(st store) {
		old, exists, wrong := stringOf(st, key)
		if wrong {
			x.w.errorReply(errWrongType)
			return
		}
		was := bitAt(old, off)
		if grow := off>>3 >= uint64(len(old)); !exists || grow || was != int(on) {
			b := grown(old, off>>3+1)
			b[off>>3] = b[off>>3]&^(0x80>>(off&7)) | byte(on)<<(7-off&7)
			storeString(st, key, frozen(b), exists, engine.KindSetBit)
		}
		x.w.int(int64(was))
	})
}

func cmdGetBit(x *call) {
	off, ok := x.bitOffset(2, 0)
	if !ok {
		return
	}
	if v, ok := x.readString(x.key(1), nil); ok {
		x.w.int(int64(bitAt(v, off)))
	}
}

// bitRange resolves BITCOUNT's and BITPOS's start and end, as Redis does,
// into a range of bits [from, to] of a value of n bytes (from > to when
// empty). isBit says the arguments count bits, not bytes.
func bitRange(n, start, end int64, isBit bool) (from, to int64) {
	total := n
	if isBit {
		total <<= 3
	}
	if start < 0 {
		start += total
	}
	if end < 0 {
		end += total
	}
	start, end = max(start, 0), max(end, 0)
	end = min(end, total-1)
	if start > end {
		return 1, 0
	}
	if isBit {
		return start, end
	}
	return start << 3, end<<3 | 7
}

// bitUnit parses BITCOUNT's and BITPOS's BYTE|BIT argument i.
func (x *call) bitUnit(i int) (isBit, ok bool) {
	switch {
	case equalFold(x.args[i], "bit"):
		return true, true
	case equalFold(x.args[i], "byte"):
		return false, true
	}
	x.w.errorReply(errSyntax)
	return false, false
}

// countBits counts the set bits of v in [from, to].
func countBits(v string, from, to int64) int64 {
	var n int
	for from <= to && from&7 != 0 {
		n += bitAt(v, uint64(from))
		from++
	}
	for ; from+63 <= to; from += 64 {
		i := from >> 3
		n += bits.OnesCount64(uint64(v[i])<<56 | uint64(v[i+1])<<48 | uint64(v[i+2])<<40 | uint64(v[i+3])<<32 |
			uint64(v[i+4])<<24 | uint64(v[i+5])<<16 | uint64(v[i+6])<<8 | uint64(v[i+7]))
	}
	for ; from+7 <= to; from += 8 {
		n += bits.OnesCount8(v[from>>3])
	}
	for ; from <= to; from++ {
		n += bitAt(v, uint64(from))
	}
	return int64(n)
}

func cmdBitCount(x *call) {
	v, ok := x.readString(x.key(1), func() { x.w.int(0) })
	if !ok {
		return
	}
	from, to := int64(0), int64(len(v))*8-1
	switch len(x.args) {
	case 2:
	case 4, 5:
		start, end, ok := x.intArgs(2)
		if !ok {
			return
		}
		if start < 0 && end < 0 && start > end {
			x.w.int(0)
			return
		}
		isBit := false
		if len(x.args) == 5 {
			if isBit, ok = x.bitUnit(4); !ok {
				return
			}
		}
		from, to = bitRange(int64(len(v)), start, end, isBit)
	default:
		x.w.errorReply(errSyntax)
		return
	}
	x.w.int(countBits(v, from, to))
}

func cmdBitPos(x *call) {
	bit, ok := x.intArg(2)
	if !ok {
		return
	}
	if bit != 0 && bit != 1 {
		x.w.errorReply("ERR The bit argument must be 1 or 0.")
		return
	}
	// A missing key is an endless run of zeros: 0 for a clear bit, -1
	// for a set one.
	v, ok := x.readString(x.key(1), func() { x.w.int(-bit) })
	if !ok {
		return
	}
	from, to, endGiven := int64(0), int64(len(v))*8-1, false
	switch len(x.args) {
	case 3:
	case 4, 5, 6:
		start, ok := x.intArg(3)
		if !ok {
			return
		}
		isBit := false
		if len(x.args) == 6 {
			if isBit, ok = x.bitUnit(5); !ok {
				return
			}
		}
		end := int64(math.MaxInt64)
		if len(x.args) >= 5 {
			if end, ok = x.intArg(4); !ok {
				return
			}
			endGiven = true
		}
		from, to = bitRange(int64(len(v)), start, end, isBit)
	default:
		x.w.errorReply(errSyntax)
		return
	}
	if from > to {
		x.w.int(-1)
		return
	}
	skip := "\x00\x00\x00\x00\x00\x00\x00\x00" // bytes that cannot hold the bit
	if bit == 0 {
		skip = "\xff\xff\xff\xff\xff\xff\xff\xff"
	}
	for i := from; i <= to; i++ {
		if i&7 == 0 {
			for i+63 <= to && v[i>>3:i>>3+8] == skip {
				i += 64
			}
			for i+7 <= to && v[i>>3] == skip[0] {
				i += 8
			}
			if i > to {
				break
			}
		}
		if int64(bitAt(v, uint64(i))) == bit {
			x.w.int(i)
			return
		}
	}
	// Past the range: a set bit is nowhere; a clear bit is the first of
	// the zeros that follow the value, unless the range had an end.
	if bit == 1 || endGiven {
		x.w.int(-1)
		return
	}
	x.w.int(to + 1)
}

func cmdBitOp(x *call) {
	op := x.args[1]
	var fn func(a, b byte) byte
	switch {
	case equalFold(op, "and"):
		fn = func(a, b byte) byte { return a & b }
	case equalFold(op, "or"):
		fn = func(a, b byte) byte { return a | b }
	case equalFold(op, "xor"):
		fn = func(a, b byte) byte { return a ^ b }
	case equalFold(op, "not"):
		if len(x.args) != 4 {
			x.w.errorReply("ERR BITOP NOT must be called with a single source key.")
			return
		}
	default:
		x.w.errorReply(errSyntax)
		return
	}
	dst := x.key(2)
	keys := make([]string, 0, len(x.args)-2)
	for i := 2; i < len(x.args); i++ {
		keys = append(keys, x.key(i))
	}
	x.atomic(keys, func(st store) {
		srcs := make([]string, 0, len(keys)-1)
		n := 0
		for _, k := range keys[1:] {
			v, found, wrong := stringOf(st, k)
			if wrong {
				x.w.errorReply(errWrongType)
				return
			}
			if !found {
				x.miss(k) // the sources are read, as Redis's lookupKeyRead
			}
			srcs = append(srcs, v)
			n = max(n, len(v))
		}
		if n == 0 {
			st.Del(dst)
			x.w.int(0)
			return
		}
		b := make([]byte, n)
		copy(b, srcs[0])
		if fn == nil {
			for i := range b {
				b[i] = ^b[i]
			}
		}
		for _, v := range srcs[1:] {
			for i := range b {
				var c byte
				if i < len(v) {
					c = v[i]
				}
				b[i] = fn(b[i], c)
			}
		}
		st.Set(dst, frozen(b))
		x.w.int(int64(n))
	})
}

// bitfieldOp is one GET, SET or INCRBY of a BITFIELD command.
type bitfieldOp struct {
	op       byte // 'g', 's' or 'i'
	overflow byte // OVERFLOW in force: 'w'rap, 's'at or 'f'ail
	signed   bool
	width    int
	offset   uint64
	arg      int64 // SET's value, INCRBY's increment
}

// errBitfieldType is Redis's reply to a bad BITFIELD type.
const errBitfieldType = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."

// bitfieldType parses a type argument: i1 to i64 or u1 to u63.
func (x *call) bitfieldType(i int) (signed bool, width int, ok bool) {
	p := x.args[i]
	if len(p) > 0 && (p[0] == 'i' || p[0] == 'u') {
		signed = p[0] == 'i'
		w, ok := parseInt(p[1:])
		limit := int64(63)
		if signed {
			limit = 64
		}
		if ok && w >= 1 && w <= limit {
			return signed, int(w), true
		}
	}
	x.w.errorReply(errBitfieldType)
	return false, 0, false
}

// parseBitfield parses BITFIELD's operations as Redis does, all before any
// runs, replying the first error.
func (x *call) parseBitfield() (ops []bitfieldOp, highest uint64, readOnly, ok bool) {
	overflow := byte('w')
	readOnly = true
	for j := 2; j < len(x.args); j++ {
		rest := len(x.args) - j - 1
		var op byte
		switch a := x.args[j]; {
		case equalFold(a, "get") && rest >= 2:
			op = 'g'
		case equalFold(a, "set") && rest >= 3:
			op = 's'
		case equalFold(a, "incrby") && rest >= 3:
			op = 'i'
		case equalFold(a, "overflow") && rest >= 1:
			j++
			switch t := x.args[j]; {
			case equalFold(t, "wrap"):
				overflow = 'w'
			case equalFold(t, "sat"):
				overflow = 's'
			case equalFold(t, "fail"):
				overflow = 'f'
			default:
				x.w.errorReply("ERR Invalid OVERFLOW type specified")
				return nil, 0, false, false
			}
			continue
		default:
			x.w.errorReply(errSyntax)
			return nil, 0, false, false
		}
		signed, width, ok := x.bitfieldType(j + 1)
		if !ok {
			return nil, 0, false, false
		}
		off, ok := x.bitOffset(j+2, width)
		if !ok {
			return nil, 0, false, false
		}
		o := bitfieldOp{op: op, overflow: overflow, signed: signed, width: width, offset: off}
		if op != 'g' {
			readOnly = false
			highest = max(highest, off+uint64(width)-1)
			if o.arg, ok = x.intArg(j + 3); !ok {
				return nil, 0, false, false
			}
			j++
		}
		ops = append(ops, o)
		j += 2
	}
	return ops, highest, readOnly, true
}

// getField reads width bits of b from bit off, unsigned (0 past its end).
func getField[T string | []byte](b T, off uint64, width int) uint64 {
	var v uint64
	for i := range uint64(width) {
		p := off + i
		var bit uint64
		if p>>3 < uint64(len(b)) {
			bit = uint64(b[p>>3]>>(7-p&7)) & 1
		}
		v = v<<1 | bit
	}
	return v
}

// setField writes the low width bits of v into b from bit off.
func setField(b []byte, off uint64, width int, v uint64) {
	for i := range uint64(width) {
		p := off + i
		bit := byte(v>>(uint64(width)-1-i)) & 1
		b[p>>3] = b[p>>3]&^(0x80>>(p&7)) | bit<<(7-p&7)
	}
}

// signedField reads the low width bits of v as a signed integer of that
// width (two's complement), ignoring the bits above.
func signedField(v uint64, width int) int64 {
	if width < 64 {
		if v&(1<<(width-1)) != 0 {
			v |= math.MaxUint64 << width
		} else {
			v &^= math.MaxUint64 << width
		}
	}
	return int64(v)
}

// addUnsigned adds incr to v, a u<width> field, as Redis's
// checkUnsignedBitfieldOverflow: it returns the sum, or what the overflow
// policy makes of it, and whether it overflowed.
func addUnsigned(v uint64, incr int64, width int, overflow byte) (uint64, bool) {
	limit := uint64(1)<<width - 1
	up := v > limit || (incr > 0 && incr > int64(limit-v))
	down := !up && incr < 0 && incr < -int64(v)
	if !up && !down {
		return v + uint64(incr), false
	}
	if overflow == 's' {
		if up {
			return limit, true
		}
		return 0, true
	}
	return (v + uint64(incr)) & limit, true
}

// addSigned is addUnsigned for an i<width> field, as Redis's
// checkSignedBitfieldOverflow.
func addSigned(v, incr int64, width int, overflow byte) (int64, bool) {
	limit := int64(math.MaxInt64)
	if width < 64 {
		limit = 1<<(width-1) - 1
	}
	least := -limit - 1
	maxIncr := int64(uint64(limit) - uint64(v))
	minIncr := least - v
	up := v > limit || (width != 64 && incr > maxIncr) || (v >= 0 && incr > 0 && incr > maxIncr)
	down := !up && (v < least || (width != 64 && incr < minIncr) || (v < 0 && incr < 0 && incr < minIncr))
	if !up && !down {
		return v + incr, false
	}
	if overflow == 's' {
		if up {
			return limit, true
		}
		return least, true
	}
	return signedField(uint64(v)+uint64(incr), width), true
}

// cmdBitField is BITFIELD and BITFIELD_RO.
func cmdBitField(x *call) {
	ops, highest, readOnly, ok := x.parseBitfield()
	if !ok {
		return
	}
	key := x.key(1)
	if readOnly {
		v, ok := x.readString(key, nil)
		if !ok {
			return
		}
		x.w.array(len(ops))
		for _, o := range ops {
			x.replyField(getField(v, o.offset, o.width), o)
		}
		return
	}
	if x.cmd.name == "bitfield_ro" {
		x.w.errorReply("ERR BITFIELD_RO only supports the GET subcommand")
		return
	}
	x.atomic([]string{key}, func(st store) {
		old, exists, wrong := stringOf(st, key)
		if wrong {
			x.w.errorReply(errWrongType)
			return
		}
		b := grown(old, highest>>3+1)
		grew := !exists || len(b) != len(old)
		changes := 0
		x.w.array(len(ops))
		for _, o := range ops {
			cur := getField(b, o.offset, o.width)
			if o.op == 'g' {
				x.replyField(cur, o)
				continue
			}
			var next, reply uint64
			var over bool
			if o.signed {
				v := signedField(cur, o.width)
				var n int64
				if o.op == 'i' {
					n, over = addSigned(v, o.arg, o.width, o.overflow)
					reply = uint64(n)
				} else {
					n, over = addSigned(o.arg, 0, o.width, o.overflow)
					reply = uint64(v)
				}
				next = uint64(n)
			} else {
				if o.op == 'i' {
					next, over = addUnsigned(cur, o.arg, o.width, o.overflow)
					reply = next
				} else {
					next, over = addUnsigned(uint64(o.arg), 0, o.width, o.overflow)
					reply = cur
				}
			}
			if over && o.overflow == 'f' {
				x.w.null()
				continue
			}
			x.replyField(reply, o)
			next &= math.MaxUint64 >> (64 - o.width)
			setField(b, o.offset, o.width, next)
			if grew || next != cur {
				changes++
			}
		}
		if changes > 0 || grew {
			storeBits(st, key, b, exists, changes > 0)
		}
	})
}

// replyField replies a value of o's field: v, sign-extended when signed
// (an unsigned field has at most 63 bits).
func (x *call) replyField(v uint64, o bitfieldOp) {
	if o.signed {
		x.w.int(signedField(v, o.width))
		return
	}
	x.w.int(int64(v))
}
