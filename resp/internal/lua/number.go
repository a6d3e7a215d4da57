package lua

// This file holds Lua 5.1's conversions between numbers and strings, and
// the builtins that rest on them, where gopher-lua's differ from the Lua
// inside Redis: tonumber (gopher-lua's rejects "1e2", reads
// "99999999999999999999" as nil and ignores a bad base), tostring of a number
// (gopher-lua prints 1e15 as 1000000000000000 and 1/3 with 16 digits, Lua
// with "%.14g"), string.format (gopher-lua's is Go's fmt: "%x" of -1 is
// "-1", "%s" of a table or nil succeeds, an unknown option prints Go's
// "%!y(...)"), and the integer arguments of the string and table
// functions, which Lua also takes as numeric strings (string.sub(s, 1,
// ARGV[1]) fails under gopher-lua).
//
// Two conversions stay gopher-lua's, since they live inside its virtual
// machine: the .. operator formats numbers as Go does, and arithmetic on
// strings reads them with Go's rules ("010" + 0 is 8, not 10).

import (
	"math"
	"math/bits"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/nxkv/nxkv/resp/internal/cnum"
)

// cString is s up to its first NUL byte: what Lua's C library sees.
func cString(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// isCSpace reports whether c is white space to the C library.
func isCSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

func skipSpace(s string, i int) int {
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	return i
}

// str2number converts s to a number as Lua 5.1 does (strtod, then strtoul
// for a hexadecimal constant): white space around it, a sign, decimal or
// hexadecimal digits with a fraction and an exponent, inf and nan. ok is
// false unless all of s (up to a NUL) is used.
func str2number(s string) (f float64, ok bool) {
	s = cString(s)
	i := skipSpace(s, 0)
	f, n := strtod(s[i:])
	if n == 0 {
		return 0, false
	}
	end := i + n
	if end < len(s) && (s[end] == 'x' || s[end] == 'X') {
		u, m := strtoul(s[i:], 16)
		f, end = float64(u), i+m
	}
	return f, skipSpace(s, end) == len(s)
}

// digitValue is the value of c as a digit in bases up to 36, or 99.
func digitValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 10
	}
	return 99
}

// digits returns how many of s's leading bytes are digits in base.
func digits(s string, base int) int {
	n := 0
	for n < len(s) && digitValue(s[n]) < base {
		n++
	}
	return n
}

// strtod reads the longest number at the start of s as glibc's strtod
// does and returns it with the bytes it used (0: none).
func strtod(s string) (float64, int) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	sign := func(f float64) float64 {
		if neg {
			return -f
		}
		return f
	}
	rest := strings.ToLower(s[i:min(len(s), i+8)])
	switch {
	case strings.HasPrefix(rest, "infinity"):
		return sign(math.Inf(1)), i + 8
	case strings.HasPrefix(rest, "inf"):
		return sign(math.Inf(1)), i + 3
	case strings.HasPrefix(rest, "nan"):
		n := i + 3
		if n < len(s) && s[n] == '(' {
			j := n + 1
			for j < len(s) && (digitValue(s[j]) < 36 || s[j] == '_') {
				j++
			}
			if j < len(s) && s[j] == ')' {
				n = j + 1
			}
		}
		return sign(math.Float64frombits(quietNaN)), n
	}
	if len(s)-i >= 2 && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') {
		if f, n := hexFloat(s[i+2:]); n > 0 {
			return sign(f), i + 2 + n
		}
		return sign(0), i + 1 // "0x" without digits: the 0 alone
	}
	m, nd := mantissa(s[i:], 10)
	if nd == 0 {
		return 0, 0
	}
	j := exponent(s, i+m, "eE")
	f, err := strconv.ParseFloat(s[i:j], 64)
	if err != nil && !isRange(err) {
		return 0, 0
	}
	return sign(f), j // out of range: ±Inf or 0, as strtod
}

// quietNaN is the NaN strtod reads "nan" as (Go's math.NaN has another
// payload, which cmsgpack.pack would show).
const quietNaN = 0x7ff8000000000000

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// hexFloat reads hexadecimal digits with an optional fraction and binary
// exponent (what follows "0x"), returning the value and the bytes used.
func hexFloat(s string) (float64, int) {
	m, nd := mantissa(s, 16)
	if nd == 0 {
		return 0, 0
	}
	mant, exp := s[:m], "p0"
	if mant[0] == '.' {
		mant = "0" + mant
	}
	j := exponent(s, m, "pP")
	if j > m {
		exp = "p" + s[m+1:j]
	}
	f, err := strconv.ParseFloat("0x"+mant+exp, 64)
	if err != nil && !isRange(err) {
		return 0, 0
	}
	return f, j
}

// mantissa returns where the digits in base at the start of s end, with an
// optional '.' and fraction, and how many digits there are.
func mantissa(s string, base int) (end, n int) {
	end = digits(s, base)
	n = end
	if end < len(s) && s[end] == '.' {
		f := digits(s[end+1:], base)
		end += 1 + f
		n += f
	}
	return end, n
}

// exponent returns where an exponent at s[j] (one of marks, an optional
// sign, decimal digits) ends, or j if none starts there.
func exponent(s string, j int, marks string) int {
	if j >= len(s) || strings.IndexByte(marks, s[j]) < 0 {
		return j
	}
	k := j + 1
	if k < len(s) && (s[k] == '+' || s[k] == '-') {
		k++
	}
	if d := digits(s[k:], 10); d > 0 {
		return k + d
	}
	return j
}

// strtoul reads an unsigned integer in base at the start of s as the C
// library's strtoul does: leading white space, a sign (a minus negates the
// result modulo 2^64), "0x" in base 16, and ULONG_MAX past it. It returns
// the value and the bytes used (0: no digits).
func strtoul(s string, base int) (uint64, int) {
	i := skipSpace(s, 0)
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	if base == 16 && len(s)-i >= 3 && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') && digitValue(s[i+2]) < 16 {
		i += 2
	}
	n := digits(s[i:], base)
	if n == 0 {
		return 0, 0
	}
	var u uint64
	over := false
	for _, c := range []byte(s[i : i+n]) {
		hi, lo := bits.Mul64(u, uint64(base))
		lo, carry := bits.Add64(lo, uint64(digitValue(c)), 0)
		over = over || hi != 0 || carry != 0
		u = lo
	}
	if over {
		return math.MaxUint64, i + n
	}
	if neg {
		u = -u
	}
	return u, i + n
}

// formatLuaNumber formats f as Lua 5.1's tostring does ("%.14g", with the C
// library's inf, -inf, nan and -nan).
func formatLuaNumber(f float64) string {
	if s, ok := cnum.FormatNonFinite(f); ok {
		return s
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e14 { // at most 14 digits: exact
		if f == 0 && math.Signbit(f) {
			return "-0"
		}
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', 14, 64)
}

// luaArgError raises Lua 5.1's "bad argument" error for argument n of the
// builtin fname.
func luaArgError(L *lua.LState, n int, fname, msg string) {
	if !calledFromLua(L) {
		fname = "?" // Lua names a function by its call, and a Go caller has none
	}
	luaRaise(L, "bad argument #"+strconv.Itoa(n)+" to '"+fname+"' ("+msg+")")
}

// luaRaise raises msg from a builtin as Lua 5.1's luaL_error does: with the
// position of the caller if it is a Lua function, and none if it is a
// builtin such as pcall. (gopher-lua prefixes the nearest Lua function's
// position, so that pcall(string.format, "%y") reported "user_script:1:".)
func luaRaise(L *lua.LState, msg string) {
	L.Error(lua.LString(luaWhere(L, 1)+msg), 0)
}

// luaWhere is Lua 5.1's luaL_where: "source:line: " for the function
// level calls up from the running builtin if it is a Lua function, else "".
func luaWhere(L *lua.LState, level int) string {
	if dbg, ok := luaFrame(L, level); ok && dbg.CurrentLine > 0 {
		return dbg.Source + ":" + strconv.Itoa(dbg.CurrentLine) + ": "
	}
	return ""
}

// calledFromLua reports whether the running builtin was called by a Lua
// function (rather than by another builtin, such as pcall).
func calledFromLua(L *lua.LState) bool {
	_, ok := luaFrame(L, 1)
	return ok
}

// luaFrame describes the function level calls up from the running builtin,
// if it is a Lua function (not a builtin).
func luaFrame(L *lua.LState, level int) (*lua.Debug, bool) {
	dbg, ok := L.GetStack(level)
	if !ok {
		return nil, false
	}
	if _, err := L.GetInfo("Sl", dbg, nil); err != nil || dbg.What == "G" {
		return nil, false
	}
	return dbg, true
}

// typeName is the Lua type name of argument n, "no value" past the last.
func typeName(L *lua.LState, n int) string {
	if n > L.GetTop() {
		return "no value"
	}
	return L.Get(n).Type().String()
}

// luaToNumber is Lua 5.1's tonumber.
func luaToNumber(L *lua.LState) int {
	base := 10
	if L.GetTop() >= 2 && L.Get(2) != lua.LNil {
		base = int(luaCInt(L, 2, "tonumber"))
	}
	if base == 10 {
		if L.GetTop() < 1 {
			luaArgError(L, 1, "tonumber", "value expected")
		}
		if f, ok := toNumber(L.Get(1)); ok {
			L.Push(lua.LNumber(f))
			return 1
		}
		L.Push(lua.LNil)
		return 1
	}
	s, ok := toStringArg(L.Get(1))
	if !ok {
		luaArgError(L, 1, "tonumber", "string expected, got "+typeName(L, 1))
	}
	if base < 2 || base > 36 {
		luaArgError(L, 2, "tonumber", "base out of range")
	}
	s = cString(s)
	if u, n := strtoul(s, base); n > 0 && skipSpace(s, n) == len(s) {
		L.Push(lua.LNumber(float64(u)))
		return 1
	}
	L.Push(lua.LNil)
	return 1
}

// toNumber converts a number or a numeric string, as lua_tonumber.
func toNumber(v lua.LValue) (float64, bool) {
	switch v := v.(type) {
	case lua.LNumber:
		return float64(v), true
	case lua.LString:
		return str2number(string(v))
	}
	return 0, false
}

// toStringArg converts a string or a number, as lua_tolstring.
func toStringArg(v lua.LValue) (string, bool) {
	switch v := v.(type) {
	case lua.LString:
		return string(v), true
	case lua.LNumber:
		return formatLuaNumber(float64(v)), true
	}
	return "", false
}

// checkLuaNumber is luaL_checknumber for argument n of the builtin fname:
// a number or a numeric string.
func checkLuaNumber(L *lua.LState, n int, fname string) float64 {
	f, ok := toNumber(L.Get(n))
	if !ok {
		luaArgError(L, n, fname, "number expected, got "+typeName(L, n))
	}
	return f
}

// checkLuaString is luaL_checklstring for argument n of the builtin fname:
// a string, or a number printed as Lua prints it.
func checkLuaString(L *lua.LState, n int, fname string) string {
	s, ok := toStringArg(L.Get(n))
	if !ok {
		luaArgError(L, n, fname, "string expected, got "+typeName(L, n))
	}
	return s
}

// nullUserData is how Lua prints cjson.null, a light userdata holding
// NULL ("%p" of NULL in glibc).
const nullUserData = "userdata: (nil)"

// luaToStringFunc is Lua 5.1's tostring: numbers as "%.14g", cjson.null as
// Lua prints it, everything else as gopher-lua's tostring (which honours
// __tostring).
func luaToStringFunc(orig *lua.LFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		if L.GetTop() < 1 {
			luaArgError(L, 1, "tostring", "value expected")
		}
		switch v := L.Get(1).(type) {
		case lua.LNumber:
			L.Push(lua.LString(formatLuaNumber(float64(v))))
			return 1
		case *lua.LUserData:
			if v.Value == nil && v.Metatable == lua.LNil {
				L.Push(lua.LString(nullUserData))
				return 1
			}
		}
		return orig.GFunction(L)
	}
}

// luaCInt is Lua 5.1's luaL_checkint for argument n of the builtin fname:
// a number or numeric string, converted as x86-64's C converts a double to
// a 64-bit integer and then to an int (NaN and 2^32 become 0).
func luaCInt(L *lua.LState, n int, fname string) int32 {
	return int32(cInt64(checkLuaNumber(L, n, fname)))
}

// optCInt is Lua 5.1's luaL_optint: argument n as luaCInt, or def when it
// is absent or nil.
func optCInt(L *lua.LState, n int, fname string, def int32) int32 {
	if L.GetTop() < n || L.Get(n) == lua.LNil {
		return def
	}
	return luaCInt(L, n, fname)
}

// clampIndex keeps a 64-bit string index within ±2^52, where gopher-lua's
// arithmetic on it cannot overflow; every string is shorter, so the index
// means the same.
func clampIndex(n int64) int64 { return max(-1<<52, min(n, 1<<52)) }

// numericArgs wraps a builtin so that its integer arguments at the given
// positions (all from the first when from is set) convert as Lua 5.1's do
// before gopher-lua reads them: numeric strings become numbers (Lua takes
// "2" wherever it takes 2), and numbers become C integers of the given
// width (32 for an int, 64 for a ptrdiff_t), so that NaN, infinities and
// huge values wrap as they do in Redis instead of reaching gopher-lua as
// Go ints near the limits of int64.
func numericArgs(orig *lua.LFunction, width, from int, positions ...int) lua.LGFunction {
	convert := func(L *lua.LState, i int) {
		f, ok := toNumber(L.Get(i))
		if !ok {
			return // gopher-lua reports the type error
		}
		n := clampIndex(cInt64(f))
		if width == 32 {
			n = int64(int32(cInt64(f)))
		}
		L.Replace(i, lua.LNumber(n))
	}
	return func(L *lua.LState) int {
		top := L.GetTop()
		for _, i := range positions {
			if i <= top {
				convert(L, i)
			}
		}
		if from > 0 {
			for i := from; i <= top; i++ {
				convert(L, i)
			}
		}
		return orig.GFunction(L)
	}
}

// tableConcat is Lua 5.1's table.concat: numbers in the table, and a
// number as the separator, print as "%.14g"; the bounds are C ints; a
// value that is neither string nor number is an error naming its index;
// and the result is held to the bulk-string limit.
func (v *vm) tableConcat(L *lua.LState) int {
	sep := ""
	if L.GetTop() >= 2 && L.Get(2) != lua.LNil {
		s, ok := toStringArg(L.Get(2))
		if !ok {
			luaArgError(L, 2, "concat", "string expected, got "+typeName(L, 2))
		}
		sep = s
	}
	t, ok := L.Get(1).(*lua.LTable)
	if !ok {
		luaArgError(L, 1, "concat", "table expected, got "+typeName(L, 1))
	}
	i := optCInt(L, 3, "concat", 1)
	last := optCInt(L, 4, "concat", int32(t.Len()))
	limit := v.rt.maxBulk
	var b strings.Builder
	for k := int64(i); k <= int64(last); k++ {
		s, ok := toStringArg(t.RawGetInt(int(k)))
		if !ok {
			luaRaise(L, "invalid value ("+t.RawGetInt(int(k)).Type().String()+") at index "+
				strconv.FormatInt(k, 10)+" in table for 'concat'")
		}
		b.WriteString(s)
		if k < int64(last) {
			b.WriteString(sep)
		}
		if b.Len() > limit {
			luaRaise(L, "resulting string too large")
		}
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// strChar is Lua 5.1's string.char: each argument a C int that must fit a
// byte (gopher-lua's wrapped 256 to 0).
func strChar(L *lua.LState) int {
	n := L.GetTop()
	b := make([]byte, n)
	for i := 1; i <= n; i++ {
		c := luaCInt(L, i, "char")
		if c != int32(byte(c)) {
			luaArgError(L, i, "char", "invalid value")
		}
		b[i-1] = byte(c)
	}
	L.Push(lua.LString(b))
	return 1
}

// stringArgs wraps a builtin so that numbers at the given string positions
// become strings as Lua 5.1 prints them ("%.14g") before gopher-lua reads
// them with Go's format: string.len(0.1+0.2) is 3 in Lua, not 19.
func stringArgs(orig *lua.LFunction, positions ...int) lua.LGFunction {
	return func(L *lua.LState) int {
		for _, i := range positions {
			if n, ok := L.Get(i).(lua.LNumber); ok && i <= L.GetTop() {
				L.Replace(i, lua.LString(formatLuaNumber(float64(n))))
			}
		}
		return orig.GFunction(L)
	}
}
