package lua

// This file holds the cmsgpack library Redis gives scripts: lua-cmsgpack
// 0.4.0 (Salvatore Sanfilippo's), as Redis 7.0 builds it for Lua 5.1,
// written anew from its behaviour. pack writes its arguments as one stream
// of MessagePack values: numbers that are integers in int64 as the
// smallest integer type, others as a float when a float holds them exactly
// and a double otherwise; strings as str types; tables whose keys are
// exactly 1..n as arrays and others as maps; tables nested 16 deep, and
// values of other types, as nil (so a circular table packs as a 16 deep
// copy). unpack reads such a stream back (bin and ext types are refused);
// unpack_one and unpack_limit read some of its values from an offset and
// return the offset of the rest, or -1 at its end.
//
// As in cjson.go, the Lua stack slots the C code would hold are counted,
// so what it refuses for want of stack (packing or unpacking thousands of
// values at once) is refused here with the same message.

import (
	"cmp"
	"encoding/binary"
	"math"
	"strconv"

	lua "github.com/yuin/gopher-lua"
)

const (
	// mpMaxNesting is lua-cmsgpack's LUACMSGPACK_MAX_NESTING: tables this
	// deep pack as nil.
	mpMaxNesting = 16
	// mpMaxPadding is how many nil slots (16 bytes each) the integer keys
	// of the maps one unpack reads may make gopher-lua allocate: 64 MB.
	mpMaxPadding = 1 << 22
)

// newCMsgpack returns the cmsgpack table.
func (v *vm) newCMsgpack() *lua.LTable {
	t := v.L.CreateTable(0, 8)
	for name, fn := range map[string]lua.LGFunction{
		"pack":   v.mpPack,
		"unpack": func(L *lua.LState) int { return mpUnpack(L, "unpack", 0, 0, L.GetTop()) },
		"unpack_one": func(L *lua.LState) int {
			offset := optLuaInteger(L, 2, "unpack_one", 0)
			return mpUnpack(L, "unpack_one", 1, offset, 1)
		},
		"unpack_limit": func(L *lua.LState) int {
			limit := checkLuaInteger(L, 2, "unpack_limit")
			offset := optLuaInteger(L, 3, "unpack_limit", 0)
			return mpUnpack(L, "unpack_limit", limit, offset, 1)
		},
	} {
		t.RawSetString(name, v.builtin("cmsgpack."+name, fn))
	}
	t.RawSetString("_NAME", lua.LString("cmsgpack"))
	t.RawSetString("_VERSION", lua.LString("lua-cmsgpack 0.4.0"))
	t.RawSetString("_COPYRIGHT", lua.LString("Copyright (C) 2012, Salvatore Sanfilippo"))
	t.RawSetString("_DESCRIPTION", lua.LString("MessagePack C implementation for Lua"))
	return t
}

// checkLuaInteger is luaL_checkinteger for argument n of the builtin
// fname: a number or numeric string, converted as C's cast to a 64-bit
// integer.
func checkLuaInteger(L *lua.LState, n int, fname string) int64 {
	return cInt64(checkLuaNumber(L, n, fname))
}

// optLuaInteger is luaL_optinteger: def when argument n is absent or nil.
func optLuaInteger(L *lua.LState, n int, fname string, def int64) int64 {
	if L.Get(n) == lua.LNil {
		return def
	}
	return checkLuaInteger(L, n, fname)
}

// checkStack raises Lua 5.1's error for want of stack when the C code,
// holding slots Lua stack slots, asks for need more (luaL_checkstack).
func checkStack(L *lua.LState, slots, need int, what string) {
	if slots+need > maxLuaResults {
		luaRaise(L, "stack overflow ("+what+")")
	}
}

// mpEncoder is one cmsgpack.pack.
type mpEncoder struct {
	L *lua.LState
	b []byte
	stepper
}

func (v *vm) mpPack(L *lua.LState) int {
	n := L.GetTop()
	if n == 0 {
		luaArgError(L, 0, "pack", "MessagePack pack needs input.")
	}
	if n+n > maxLuaResults {
		luaArgError(L, 0, "pack", "Too many arguments for MessagePack pack.")
	}
	e := mpEncoder{L: L, stepper: stepper{limit: v.rt.maxBulk}}
	for i := 1; i <= n; i++ {
		slots := n + i - 1 // the arguments and the values packed so far
		checkStack(L, slots, 1, "in function mp_check")
		e.value(L.Get(i), 0, slots+1)
	}
	L.Push(lua.LString(e.b))
	return 1
}

// value appends v, at the given table nesting level, with slots Lua stack
// slots held by the C encoder (v on top).
func (e *mpEncoder) value(v lua.LValue, level, slots int) {
	e.step(e.L, len(e.b), "packing")
	switch v := v.(type) {
	case lua.LString:
		e.bytes(string(v))
	case lua.LBool:
		if v {
			e.b = append(e.b, 0xc3)
		} else {
			e.b = append(e.b, 0xc2)
		}
	case lua.LNumber:
		f := float64(v)
		if !math.IsInf(f, 0) && float64(cInt64(f)) == f {
			e.int(cInt64(f))
		} else {
			e.double(f)
		}
	case *lua.LTable:
		if level == mpMaxNesting {
			e.b = append(e.b, 0xc0)
			return
		}
		e.table(v, level, slots)
	default:
		e.b = append(e.b, 0xc0)
	}
}

func (e *mpEncoder) table(t *lua.LTable, level, slots int) {
	checkStack(e.L, slots, 2, "in function table_is_an_array")
	count, max := int32(0), int32(0)
	array := true
	for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
		n, ok := k.(lua.LNumber)
		if !ok || n <= 0 || float64(cInt32(float64(n))) != float64(n) {
			array = false
			break
		}
		max = maxInt32(max, int32(n))
		count++
	}
	if array && max == count {
		checkStack(e.L, slots, 1, "in function mp_encode_lua_table_as_array")
		e.header(uint64(count), 0x90, 0xdc, 0xdd)
		for j := 1; j <= int(count); j++ {
			e.value(t.RawGetInt(j), level+1, slots+1)
		}
		return
	}
	checkStack(e.L, slots, 3, "in function mp_encode_lua_table_as_map")
	n := 0
	for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
		n++
	}
	e.header(uint64(n), 0x80, 0xde, 0xdf)
	for k, val := t.Next(lua.LNil); k != lua.LNil; k, val = t.Next(k) {
		e.value(k, level+1, slots+3)
		e.value(val, level+1, slots+2)
	}
}

func maxInt32(a, b int32) int32 {
	if a > b {
		return a
	}
	return b
}

// header appends an array or map header of n elements: fix (n in its low
// bits), 16 or 32 bits.
func (e *mpEncoder) header(n uint64, fix, b16, b32 byte) {
	switch {
	case n <= 15:
		e.b = append(e.b, fix|byte(n))
	case n <= 0xffff:
		e.b = append(e.b, b16, byte(n>>8), byte(n))
	default:
		e.b = append(e.b, b32)
		e.b = binary.BigEndian.AppendUint32(e.b, uint32(n))
	}
}

func (e *mpEncoder) bytes(s string) {
	n := len(s)
	switch {
	case n < 32:
		e.b = append(e.b, 0xa0|byte(n))
	case n <= 0xff:
		e.b = append(e.b, 0xd9, byte(n))
	case n <= 0xffff:
		e.b = append(e.b, 0xda, byte(n>>8), byte(n))
	default:
		e.b = append(e.b, 0xdb)
		e.b = binary.BigEndian.AppendUint32(e.b, uint32(n))
	}
	e.b = append(e.b, s...)
}

func (e *mpEncoder) double(d float64) {
	if f := float32(d); float64(f) == d && !plantCodecBugs {
		e.b = append(e.b, 0xca)
		e.b = binary.BigEndian.AppendUint32(e.b, math.Float32bits(f))
		return
	}
	e.b = append(e.b, 0xcb)
	e.b = binary.BigEndian.AppendUint64(e.b, math.Float64bits(d))
}

func (e *mpEncoder) int(n int64) {
	switch {
	case n >= 0 && n <= 127:
		e.b = append(e.b, byte(n))
	case n >= 0 && n <= 0xff:
		e.b = append(e.b, 0xcc, byte(n))
	case n >= 0 && n <= 0xffff:
		e.b = append(e.b, 0xcd, byte(n>>8), byte(n))
	case n >= 0 && n <= 0xffffffff:
		e.b = append(e.b, 0xce)
		e.b = binary.BigEndian.AppendUint32(e.b, uint32(n))
	case n >= 0:
		e.b = append(e.b, 0xcf)
		e.b = binary.BigEndian.AppendUint64(e.b, uint64(n))
	case n >= -32:
		e.b = append(e.b, byte(n))
	case n >= -128:
		e.b = append(e.b, 0xd0, byte(n))
	case n >= -32768:
		e.b = append(e.b, 0xd1, byte(n>>8), byte(n))
	case n >= -2147483648:
		e.b = append(e.b, 0xd2)
		e.b = binary.BigEndian.AppendUint32(e.b, uint32(n))
	default:
		e.b = append(e.b, 0xd3)
		e.b = binary.BigEndian.AppendUint64(e.b, uint64(n))
	}
}

// Why a cmsgpack decoder stopped.
const (
	mpOK = iota
	mpEOF
	mpBadFormat
)

// mpDecoder is one unpack: it reads values from s, pushing them, as
// lua-cmsgpack does, on a Lua stack whose slots it counts.
type mpDecoder struct {
	L     *lua.LState
	s     string
	err   int
	slots int
	stepper
	// pad is how many more nil slots the maps' integer keys may make
	// gopher-lua allocate (see hash); sparse is the first key past it.
	pad    int
	sparse lua.LValue
}

// mpUnpack is unpack (limit and offset 0: every value, and no offset
// returned), unpack_one (limit 1) and unpack_limit; slots is what the C
// function's stack holds when it starts reading (its arguments).
func mpUnpack(L *lua.LState, fname string, limit, offset int64, slots int) int {
	if L.GetTop() > slots {
		L.SetTop(slots)
	}
	s := checkLuaString(L, 1, fname)
	if offset < 0 || limit < 0 {
		luaRaise(L, "Invalid request to unpack with offset of "+strconv.Itoa(int(int32(offset)))+
			" and limit of "+strconv.Itoa(int(int32(len(s))))+".")
	}
	if uint64(offset) > uint64(len(s)) {
		luaRaise(L, "Start offset "+strconv.Itoa(int(int32(offset)))+" greater than input length "+
			strconv.Itoa(int(int32(len(s))))+".")
	}
	all := limit == 0 && offset == 0
	if all {
		limit = math.MaxInt32
	}
	d := mpDecoder{L: L, s: s[offset:], slots: max(slots, 1), pad: mpMaxPadding, stepper: stepper{limit: math.MaxInt}}
	var out []lua.LValue
	for cnt := int64(0); len(d.s) > 0 && cnt < limit; cnt++ {
		val := d.value()
		switch d.err {
		case mpEOF:
			luaRaise(L, "Missing bytes in input.")
		case mpBadFormat:
			luaRaise(L, "Bad data format in input.")
		}
		out = append(out, val)
		d.slots++
	}
	if d.sparse != nil {
		luaRaise(L, "nxkv: map key "+d.sparse.String()+" would make a table too large to build")
	}
	if !all {
		checkStack(L, d.slots, 1, "in function mp_unpack_full")
		next := lua.LNumber(len(s) - len(d.s))
		if len(d.s) == 0 {
			next = -1
		}
		L.Push(next)
	}
	for _, val := range out {
		L.Push(val)
	}
	if all {
		return len(out)
	}
	return len(out) + 1
}

// need reports whether n more bytes are left, and notes EOF if not.
func (d *mpDecoder) need(n uint64) bool {
	if uint64(len(d.s)) < n {
		d.err = mpEOF
		return false
	}
	return true
}

// value decodes one value; d.err is set when it could not.
func (d *mpDecoder) value() lua.LValue {
	if !d.need(1) {
		return lua.LNil
	}
	checkStack(d.L, d.slots, 1, "too many return values at once; use unpack_one or unpack_limit instead.")
	d.step(d.L, 0, "unpacking")
	s := d.s
	fixed := func(n int) string { // n bytes after the type byte
		if !d.need(uint64(n) + 1) {
			return ""
		}
		d.s = d.s[n+1:]
		return s[1 : n+1]
	}
	num := func(f float64) lua.LValue { return lua.LNumber(f) }
	switch c := s[0]; c {
	case 0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd1, 0xd2, 0xd3: // uint, int 8 to 64
		n := 1 << ((c - 0xcc) & 3)
		if b := fixed(n); b != "" {
			var u uint64
			for _, x := range []byte(b) {
				u = u<<8 | uint64(x)
			}
			if c >= 0xd0 { // signed: extend the sign
				shift := 64 - 8*n
				return num(float64(int64(u<<shift) >> shift))
			}
			// lua_pushunsigned is lua_pushinteger: a uint64 is signed
			return num(float64(int64(u)))
		}
	case 0xc0:
		d.s = d.s[1:]
		return lua.LNil
	case 0xc3, 0xc2:
		d.s = d.s[1:]
		return lua.LBool(c == 0xc3)
	case 0xca:
		if b := fixed(4); b != "" {
			return num(float64(math.Float32frombits(binary.BigEndian.Uint32([]byte(b)))))
		}
	case 0xcb:
		if b := fixed(8); b != "" {
			return num(math.Float64frombits(binary.BigEndian.Uint64([]byte(b))))
		}
	case 0xd9, 0xda, 0xdb: // str 8, 16, 32
		n := 1 << (c - 0xd9)
		if l, ok := d.length(n); ok {
			return d.str(n+1, l)
		}
	case 0xdc, 0xdd: // array 16, 32
		n := 2 << (c - 0xdc)
		if l, ok := d.length(n); ok {
			d.s = d.s[n+1:]
			return d.array(l)
		}
	case 0xde, 0xdf: // map 16, 32
		n := 2 << (c - 0xde)
		if l, ok := d.length(n); ok {
			d.s = d.s[n+1:]
			return d.hash(l)
		}
	default:
		switch {
		case c&0x80 == 0: // positive fixnum
			d.s = d.s[1:]
			return num(float64(c))
		case c&0xe0 == 0xe0: // negative fixnum
			d.s = d.s[1:]
			return num(float64(int8(c)))
		case c&0xe0 == 0xa0: // fix str
			return d.str(1, uint64(c&0x1f))
		case c&0xf0 == 0x90: // fix array
			d.s = d.s[1:]
			return d.array(uint64(c & 0xf))
		case c&0xf0 == 0x80: // fix map
			d.s = d.s[1:]
			return d.hash(uint64(c & 0xf))
		}
		d.err = mpBadFormat
	}
	return lua.LNil
}

// length reads the n-byte big-endian length after the type byte, or
// notes EOF.
func (d *mpDecoder) length(n int) (uint64, bool) {
	if !d.need(uint64(n) + 1) {
		return 0, false
	}
	var l uint64
	for _, c := range []byte(d.s[1 : n+1]) {
		l = l<<8 | uint64(c)
	}
	return l, true
}

// str decodes a string of n bytes after a header of hdr bytes.
func (d *mpDecoder) str(hdr int, n uint64) lua.LValue {
	if !d.need(uint64(hdr) + n) {
		return lua.LNil
	}
	v := d.s[hdr : uint64(hdr)+n]
	d.s = d.s[uint64(hdr)+n:]
	return lua.LString(v)
}

// array decodes n values into a table at 1..n; the C decoder holds the
// table, and each key while its value decodes.
func (d *mpDecoder) array(n uint64) lua.LValue {
	t := d.L.NewTable()
	d.slots++
	checkStack(d.L, d.slots, 1, "in function mp_decode_to_lua_array")
	for i := uint64(1); i <= n; i++ {
		d.slots++
		v := d.value()
		d.slots--
		if d.err != mpOK {
			return lua.LNil
		}
		t.RawSetInt(int(i), v)
	}
	d.slots--
	return t
}

// hash decodes n key-value pairs into a table; the C decoder holds the
// table, and each key while its value decodes.
//
// gopher-lua keeps every integer key from 1 to 2^26 in a table's array
// part, allocating the nil slots before it: one key near 2^26 costs a
// gigabyte (Lua keeps it in the hash part). So the slots a call's keys
// would add are counted against a budget (mpMaxPadding); past it the key
// is left out, and unpacking fails once the input has been read (unless
// it fails as Redis would first), rather than take the process's memory
// inside one call.
func (d *mpDecoder) hash(n uint64) lua.LValue {
	t := d.L.NewTable()
	d.slots++
	extent := 0 // the table's array part: the largest integer key so far
	for range n {
		k := d.value()
		if d.err != mpOK {
			return lua.LNil
		}
		d.slots++
		v := d.value()
		d.slots--
		if d.err != mpOK {
			return lua.LNil
		}
		switch k := k.(type) {
		case *lua.LNilType:
			d.L.Error(lua.LString("table index is nil"), 0)
		case lua.LNumber:
			if math.IsNaN(float64(k)) {
				d.L.Error(lua.LString("table index is NaN"), 0)
			}
			if f := float64(k); f == math.Floor(f) && f > float64(extent) && f < float64(lua.MaxArrayIndex) {
				if d.pad -= int(f) - extent - 1; d.pad < 0 {
					d.sparse = cmp.Or(d.sparse, lua.LValue(k))
					continue // mpUnpack fails once the input has been read
				}
				extent = int(f)
			}
		}
		t.RawSet(k, v)
	}
	d.slots--
	return t
}
