// Package cnum prints floating-point numbers as the C library does on
// Linux, which is how Redis and the Lua inside it print them: printf's
// "%.17g" for doubles in replies, with C's names for the values that are
// not finite. Its functions are pure and safe for concurrent use.
package cnum

import (
	"math"
	"strconv"
)

// FormatDouble formats f as Redis replies doubles, with C's "%.17g":
// inf, -inf, nan and -nan for the values that are not finite.
func FormatDouble(f float64) string {
	if s, ok := FormatNonFinite(f); ok {
		return s
	}
	return strconv.FormatFloat(f, 'g', 17, 64)
}

// FormatNonFinite formats an infinity or NaN as the C library's printf
// does (inf, -inf, nan, and -nan for a NaN with its sign bit set, such as
// 0/0 on x86); ok is false for a finite f.
func FormatNonFinite(f float64) (s string, ok bool) {
	switch {
	case math.IsInf(f, 1):
		return "inf", true
	case math.IsInf(f, -1):
		return "-inf", true
	case math.IsNaN(f) && math.Signbit(f):
		return "-nan", true
	case math.IsNaN(f):
		return "nan", true
	}
	return "", false
}
