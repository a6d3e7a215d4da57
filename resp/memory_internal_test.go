package resp

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
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

// estimated is an Object's two estimates of its bytes.
type estimated interface {
	size() int
	Size() int64
}

// TestSizeEstimate: the size every type gives the engine's memory bound
// (Size, from eight sampled elements) is MEMORY USAGE's count (size) for up
// to eight elements, and within 10% of it for 2,000 elements of random
// lengths, for each encoding.
func TestSizeEstimate(t *testing.T) {
	lengths := rand.New(rand.NewPCG(1, 2)).Perm(2000)
	pad := func(i int) int { return lengths[i] % 20 }
	build := map[string]func(n int) estimated{
		"hash": func(n int) estimated {
			h := &hashObj{}
			for i := range n {
				h.d.put("field"+strconv.Itoa(i), strings.Repeat("v", 10+pad(i)))
			}
			return h
		},
		"list": func(n int) estimated {
			l := &listObj{}
			for i := range n {
				l.d.pushBack(strings.Repeat("e", 10+pad(i)))
			}
			return l
		},
		"set": func(n int) estimated {
			s := &setObj{big: &dense[struct{}]{}}
			for i := range n {
				s.big.put("member"+strconv.Itoa(i)+strings.Repeat("m", pad(i)), struct{}{})
			}
			return s
		},
		"intset": func(n int) estimated {
			s := &setObj{}
			for i := range n {
				s.ints = append(s.ints, int64(i))
			}
			return s
		},
		"zset-listpack": func(n int) estimated {
			z := &zsetObj{}
			for i := range n {
				z.small = append(z.small, zentry{member: "m" + strconv.Itoa(i) + strings.Repeat("m", pad(i)), score: float64(i)})
			}
			return z
		},
		"zset-skiplist": func(n int) estimated {
			z := &zsetObj{dict: &dense[float64]{}, sl: newSkiplist()}
			for i := range n {
				m := "m" + strconv.Itoa(i) + strings.Repeat("m", pad(i))
				z.dict.put(m, float64(i))
				z.sl.insert(zentry{member: m, score: float64(i)})
			}
			return z
		},
	}
	for name, f := range build {
		for _, n := range []int{0, 1, 3, 8} {
			if o := f(n); o.Size() != int64(o.size()) {
				t.Errorf("%s of %d: Size %d, size %d", name, n, o.Size(), o.size())
			}
		}
		o := f(2000)
		t.Logf("%s of 2000: Size %d, size %d", name, o.Size(), o.size())
		if r := float64(o.Size()) / float64(o.size()); math.Abs(r-1) > 0.1 {
			t.Errorf("%s of 2000: Size %d, size %d (%.3f)", name, o.Size(), o.size(), r)
		}
	}
}
