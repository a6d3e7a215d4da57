package resp

// This file does INCRBYFLOAT's arithmetic as Redis does it on x86-64: in
// 80-bit extended precision (a 64-bit significand), parsed as strtold does
// and printed as "%.17Lf" with trailing zeros removed, so that results
// match Redis byte for byte (0.1 + 0.2 is "0.3", not "0.30000000000000004").

import (
	"bytes"
	"math"
	"math/big"
	"strings"
)

// longDouble is an extended-precision value: finite, or an infinity.
type longDouble struct {
	f   *big.Float // nil when inf != 0
	inf int        // +1 or -1 for an infinity
}

const (
	ldPrec = 64 // the x87 extended significand
	// maxLongDoubleChars bounds the text Redis parses as a long double.
	maxLongDoubleChars = 5 * 1024
)

var (
	// ldMax and ldMinSub bound the finite non-zero magnitudes an 80-bit
	// long double holds (LDBL_MAX, and half the least subnormal).
	ldMax    = new(big.Float).SetMantExp(new(big.Float).SetUint64(math.MaxUint64), 16384-64)
	ldMinSub = new(big.Float).SetMantExp(big.NewFloat(1), -16446)
)

func zeroLongDouble() longDouble {
	return longDouble{f: new(big.Float).SetPrec(ldPrec)}
}

// parseLongDouble parses b as Redis's string2ld: no leading space, the
// whole text a number (strtold syntax: decimal, hexadecimal, inf or
// infinity), not NaN, and within range.
func parseLongDouble(b []byte) (longDouble, bool) {
	if len(b) == 0 || len(b) >= maxLongDoubleChars {
		return longDouble{}, false
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return longDouble{}, false // strtold would stop short of the end
	}
	s := string(b)
	if s == "" || isSpace(s[0]) {
		return longDouble{}, false
	}
	body, sign := s, 1
	switch body[0] {
	case '-':
		sign, body = -1, body[1:]
	case '+':
		body = body[1:]
	}
	if l := strings.ToLower(body); l == "inf" || l == "infinity" {
		return longDouble{inf: sign}, true
	}
	if !validFloatSyntax(body) {
		return longDouble{}, false
	}
	base := 10
	if len(body) > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X') {
		base = 0
		if !strings.ContainsAny(body, "pP") {
			s += "p0" // big.Float wants a binary exponent for hex mantissas
		}
	}
	f, _, err := new(big.Float).SetPrec(ldPrec).SetMode(big.ToNearestEven).Parse(s, base)
	if err != nil {
		return longDouble{}, false
	}
	if f.IsInf() {
		return longDouble{}, false
	}
	a := new(big.Float).Abs(f)
	if a.Cmp(ldMax) > 0 || (a.Sign() != 0 && a.Cmp(ldMinSub) < 0) {
		return longDouble{}, false // strtold's ERANGE: HUGE_VAL or 0
	}
	return longDouble{f: f}, true
}

// validFloatSyntax reports whether s (unsigned) is a strtold number:
// digits with an optional point and decimal exponent, or a hexadecimal
// mantissa with an optional binary exponent.
func validFloatSyntax(s string) bool {
	hex := len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')
	if hex {
		s = s[2:]
	}
	digits, i := 0, 0
	isDigit := func(c byte) bool {
		if hex {
			return isHex(c)
		}
		return c >= '0' && c <= '9'
	}
	for i < len(s) && isDigit(s[i]) {
		i, digits = i+1, digits+1
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i, digits = i+1, digits+1
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && ((!hex && (s[i] == 'e' || s[i] == 'E')) || (hex && (s[i] == 'p' || s[i] == 'P'))) {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k == j {
			return false
		}
		i = k
	}
	return i == len(s)
}

// addLongDouble returns a+b rounded to extended precision; ok is false if
// the sum is infinite or NaN.
func addLongDouble(a, b longDouble) (longDouble, bool) {
	if a.inf != 0 || b.inf != 0 {
		return longDouble{}, false
	}
	sum := new(big.Float).SetPrec(ldPrec).SetMode(big.ToNearestEven).Add(a.f, b.f)
	if new(big.Float).Abs(sum).Cmp(ldMax) > 0 {
		return longDouble{}, false
	}
	return longDouble{f: sum}, true
}

// formatLongDouble prints v as Redis's human-friendly long double: "%.17Lf"
// with the trailing zeros (and a bare point) removed, and "-0" as "0".
func formatLongDouble(v longDouble) string {
	s := v.f.Text('f', 17)
	if strings.IndexByte(s, '.') >= 0 {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}
