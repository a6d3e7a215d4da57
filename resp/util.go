package resp

// This file holds small text helpers every layer uses: Redis's string2ll,
// ASCII case folding, and the sanitizing of error texts.

import (
	"math"
	"strconv"
	"strings"
)

// equalFold reports whether b equals the lower-case ASCII word s, ignoring
// case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// itoa formats n in base 10.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// truncate returns at most n bytes of s.
func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// sanitize replaces CR and LF, which would break the protocol, by spaces,
// as Redis does in error replies.
func sanitize(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, s)
}

// parseInt parses b as Redis's string2ll does: an optional '-', then "0"
// or a digit 1-9 followed by digits, within int64; nothing else.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := b[0] == '-'
	d := b
	if neg {
		d = d[1:]
	}
	if len(d) == 0 || d[0] < '1' || d[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, c := range d {
		if c < '0' || c > '9' || v > (1<<63)/10 {
			return 0, false
		}
		v = v*10 + uint64(c-'0') // at most 2^63+9: no wrap
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

// parseMemory parses a memory value as Redis's memtoull: digits and an
// optional unit (b, k, kb, m, mb, g, gb, any case; k is 1000, kb 1024),
// no sign; digits past 2^64-1 saturate, and the product with the unit
// wraps around, as Redis's C does. An empty value is 0.
func parseMemory(v string) (uint64, bool) {
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	var mul uint64
	switch strings.ToLower(v[i:]) {
	case "", "b":
		mul = 1
	case "k":
		mul = 1000
	case "kb":
		mul = 1024
	case "m":
		mul = 1000 * 1000
	case "mb":
		mul = 1024 * 1024
	case "g":
		mul = 1000 * 1000 * 1000
	case "gb":
		mul = 1024 * 1024 * 1024
	default:
		return 0, false
	}
	if i >= 128 {
		return 0, false // Redis's digit buffer
	}
	n, err := strconv.ParseUint(v[:i], 10, 64)
	if err != nil && i > 0 {
		n = math.MaxUint64 // strtoull saturates
	}
	return n * mul, true
}
