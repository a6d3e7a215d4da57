package lua

// This file holds string.format as Lua 5.1 has it: each item is what the C
// library's sprintf makes of the same conversion, with Lua's checks of the
// arguments and of the format. gopher-lua's is Go's fmt, which differs in
// the conversions (%x of -1, %c of 321, %s of a table, %g's default
// precision) and accepts what Lua refuses.

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// formatFlags are the flags a conversion may carry, each at most once in
// effect; Lua refuses more than five of them in a row.
const formatFlags = "-+ #0"

// strFormat is Lua 5.1's string.format, with its result held to the
// bulk-string limit (many %s of one large argument would otherwise
// allocate without bound inside one call).
func (v *vm) strFormat(L *lua.LState) int {
	limit := v.rt.maxBulk
	fs, ok := toStringArg(L.Get(1))
	if !ok {
		luaArgError(L, 1, "format", "string expected, got "+typeName(L, 1))
	}
	top := L.GetTop()
	arg := 1
	var b strings.Builder
	for i := 0; i < len(fs); {
		if b.Len() > limit {
			luaRaise(L, "resulting string too large")
		}
		c := fs[i]
		i++
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i < len(fs) && fs[i] == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		arg++
		if arg > top {
			luaArgError(L, arg, "format", "no value")
		}
		spec, conv, next := scanFormat(L, fs, i)
		i = next
		switch conv {
		case 'c':
			f := checkLuaNumber(L, arg, "format")
			b.WriteString(cString(spec.pad(string([]byte{byte(cInt32(f))}))))
		case 'd', 'i':
			n := cInt64(checkLuaNumber(L, arg, "format"))
			mag := uint64(n)
			if n < 0 {
				mag = -mag
			}
			b.WriteString(spec.integer(conv, n < 0, mag))
		case 'o', 'u', 'x', 'X':
			b.WriteString(spec.integer(conv, false, cUint64(checkLuaNumber(L, arg, "format"))))
		case 'e', 'E', 'f', 'g', 'G':
			b.WriteString(cString(spec.float(conv, checkLuaNumber(L, arg, "format"))))
		case 'q':
			s := checkLuaString(L, arg, "format")
			if !addQuoted(&b, s, limit) {
				luaRaise(L, "resulting string too large")
			}
		case 's':
			s := checkLuaString(L, arg, "format")
			if !spec.hasPrec && len(s) >= 100 {
				b.WriteString(s) // whole, NUL bytes included, as Lua does
				continue
			}
			s = cString(s)
			if spec.hasPrec && len(s) > spec.prec {
				s = s[:spec.prec]
			}
			b.WriteString(spec.pad(s))
		default:
			c := string(conv)
			if conv == 0 {
				c = "" // a format ending in '%': Lua's message drops the NUL
			}
			luaRaise(L, "invalid option '%"+c+"' to 'format'")
		}
	}
	if b.Len() > limit {
		luaRaise(L, "resulting string too large")
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// formatSpec is one conversion's flags, width and precision.
type formatSpec struct {
	minus, plus, space, alt, zero bool
	width, prec                   int
	hasWidth, hasPrec             bool
}

// scanFormat reads the flags, width and precision after a '%' at i, as Lua
// 5.1 does (at most two digits each), and returns them with the
// conversion character (0 past the end) and the index after it.
func scanFormat(L *lua.LState, fs string, i int) (formatSpec, byte, int) {
	var sp formatSpec
	start := i
	for i < len(fs) && strings.IndexByte(formatFlags, fs[i]) >= 0 {
		switch fs[i] {
		case '-':
			sp.minus = true
		case '+':
			sp.plus = true
		case ' ':
			sp.space = true
		case '#':
			sp.alt = true
		case '0':
			sp.zero = true
		}
		i++
	}
	if i-start > len(formatFlags) {
		luaRaise(L, "invalid format (repeated flags)")
	}
	isDigit := func(i int) bool { return i < len(fs) && fs[i] >= '0' && fs[i] <= '9' }
	readNumber := func() int {
		n := 0
		for k := 0; k < 2 && isDigit(i); k++ {
			n = n*10 + int(fs[i]-'0')
			i++
		}
		return n
	}
	if isDigit(i) {
		sp.width, sp.hasWidth = readNumber(), true
	}
	if i < len(fs) && fs[i] == '.' {
		i++
		sp.prec, sp.hasPrec = readNumber(), true
	}
	if isDigit(i) {
		luaRaise(L, "invalid format (width or precision too long)")
	}
	if i >= len(fs) {
		return sp, 0, i
	}
	return sp, fs[i], i + 1
}

// goFormat rebuilds the spec as a Go fmt directive for verb.
func (sp formatSpec) goFormat(verb byte) string {
	var f strings.Builder
	f.WriteByte('%')
	for _, fl := range []struct {
		on bool
		c  byte
	}{{sp.minus, '-'}, {sp.plus, '+'}, {sp.space, ' '}, {sp.alt, '#'}, {sp.zero, '0'}} {
		if fl.on {
			f.WriteByte(fl.c)
		}
	}
	if sp.hasWidth {
		f.WriteString(strconv.Itoa(sp.width))
	}
	if sp.hasPrec {
		f.WriteByte('.')
		f.WriteString(strconv.Itoa(sp.prec))
	}
	f.WriteByte(verb)
	return f.String()
}

// integer formats a magnitude (negative for d and i when neg) as C's
// integer conversions: the precision is the least number of digits (none
// for a zero at precision 0), '#' puts 0 before octal and 0x before a
// non-zero hexadecimal, the sign flags apply to d and i only, and '0' pads
// with zeros unless a precision or '-' is given.
func (sp formatSpec) integer(conv byte, neg bool, mag uint64) string {
	base := 10
	switch conv {
	case 'o':
		base = 8
	case 'x', 'X':
		base = 16
	}
	digits := strconv.FormatUint(mag, base)
	if conv == 'X' {
		digits = strings.ToUpper(digits)
	}
	if sp.hasPrec && sp.prec == 0 && mag == 0 {
		digits = ""
	}
	if sp.hasPrec && len(digits) < sp.prec {
		digits = strings.Repeat("0", sp.prec-len(digits)) + digits
	}
	prefix := ""
	switch {
	case conv == 'o' && sp.alt && !strings.HasPrefix(digits, "0"):
		digits = "0" + digits
	case (conv == 'x' || conv == 'X') && sp.alt && mag != 0:
		prefix = "0" + string(conv)
	case conv == 'd' || conv == 'i':
		switch {
		case neg:
			prefix = "-"
		case sp.plus:
			prefix = "+"
		case sp.space:
			prefix = " "
		}
	}
	if sp.zero && !sp.minus && !sp.hasPrec && sp.hasWidth && len(prefix)+len(digits) < sp.width {
		digits = strings.Repeat("0", sp.width-len(prefix)-len(digits)) + digits
	}
	return sp.pad(prefix + digits)
}

// float formats f as C's %e, %E, %f, %g or %G: the precision defaults to
// 6 (Go's %g would print the shortest form), and infinities and NaNs read
// as the C library writes them.
func (sp formatSpec) float(conv byte, f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		s := "inf"
		if math.IsNaN(f) {
			s = "nan"
		}
		if conv == 'E' || conv == 'G' {
			s = strings.ToUpper(s)
		}
		switch {
		case math.Signbit(f):
			s = "-" + s
		case sp.plus:
			s = "+" + s
		case sp.space:
			s = " " + s
		}
		sp.zero = false
		return sp.pad(s)
	}
	if !sp.hasPrec {
		sp.prec, sp.hasPrec = 6, true
	}
	return fmt.Sprintf(sp.goFormat(conv), f)
}

// pad pads s with spaces to the width, on the left unless '-' is set.
func (sp formatSpec) pad(s string) string {
	if !sp.hasWidth || len(s) >= sp.width {
		return s
	}
	fill := strings.Repeat(" ", sp.width-len(s))
	if sp.minus {
		return s + fill
	}
	return fill + s
}

// addQuoted writes s as Lua 5.1's %q: in double quotes, with '"', '\\' and
// a newline escaped by a backslash, "\r" as \r and NUL as \000. It stops
// and reports false once b grows past limit (a NUL takes four bytes).
func addQuoted(b *strings.Builder, s string, limit int) bool {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if i%4096 == 0 && b.Len() > limit {
			return false
		}
		switch c := s[i]; c {
		case '"', '\\', '\n':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\r':
			b.WriteString(`\r`)
		case 0:
			b.WriteString(`\000`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return true
}

// cInt64 converts f as x86-64's C cast to a 64-bit integer: truncated,
// with the "integer indefinite" value for NaN and out-of-range numbers.
func cInt64(f float64) int64 {
	if f != f || f >= 1<<63 || f < -(1<<63) {
		return math.MinInt64
	}
	return int64(f)
}

// cInt32 is cInt64 for a C int.
func cInt32(f float64) int32 {
	if f != f || f >= 1<<31 || f < -(1<<31) {
		return math.MinInt32
	}
	return int32(f)
}

// cUint64 converts f as x86-64's C cast to an unsigned 64-bit integer:
// below 2^63 (or NaN, which compares as neither) through the signed
// conversion (so -1 is 2^64-1), above it by subtracting 2^63 first.
func cUint64(f float64) uint64 {
	if f < 1<<63 || f != f {
		return uint64(cInt64(f))
	}
	return uint64(cInt64(f-(1<<63))) ^ 1<<63
}
