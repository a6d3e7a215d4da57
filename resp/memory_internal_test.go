package resp

import (
	"math"
	"testing"
)

// TestParseMemory: Redis's memtoull, as redis-server 7.0.15 answers CONFIG
// SET maxmemory (checked by hand, and byte for byte by
// TestMaxmemorySessionsMatchRedis): units by case, k is 1000 and kb 1024,
// no sign, no space, no fraction; digits past 2^64-1 saturate and the
// product with a unit wraps.
func TestParseMemory(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true}, {"", 0, true}, {"k", 0, true}, {"1b", 1, true}, {"5B", 5, true},
		{"1k", 1000, true}, {"2K", 2000, true}, {"100kb", 102400, true}, {"1m", 1e6, true},
		{"10mB", 10 << 20, true}, {"1g", 1e9, true}, {"1GB", 1 << 30, true},
		{"18446744073709551615", math.MaxUint64, true}, {"18446744073709551616", math.MaxUint64, true},
		{"18446744073709551615kb", math.MaxUint64 - 1023, true}, // (2^64-1)*1024 mod 2^64
		{"bla", 0, false}, {"-1", 0, false}, {"+1", 0, false}, {" 1", 0, false}, {"1.5mb", 0, false},
		{"1 kb", 0, false}, {"1t", 0, false}, {"0x10", 0, false},
	} {
		got, ok := parseMemory(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseMemory(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestHumanBytes: Redis's bytesToHuman, as redis-server 7.0.15 prints
// maxmemory_human for these bounds.
func TestHumanBytes(t *testing.T) {
	for n, want := range map[uint64]string{
		0: "0B", 1023: "1023B", 1024: "1.00K", 1048575: "1024.00K", 1073741823: "1024.00M",
		5000000000: "4.66G", 1099511627776: "1.00T", 1125899906842624: "1.00P",
		1152921504606846976: "1152921504606846976B", math.MaxUint64: "18446744073709551615B",
	} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
