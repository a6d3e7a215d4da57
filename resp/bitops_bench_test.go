package resp

import (
	"strconv"
	"strings"
	"testing"
)

// BenchmarkBitmaps times the bitmap commands through one connection's
// dispatcher without a network, on values of 1 KB and 1 MB: reads are
// O(1) (GETBIT) or a pass over the value (BITCOUNT, BITPOS); writes copy
// the value, so their cost grows with it.
func BenchmarkBitmaps(b *testing.B) {
	for _, size := range []int{1 << 10, 1 << 20} {
		value := strings.Repeat("\xff", size-1) + "\x01"
		last := strconv.Itoa(size*8 - 2)
		for _, tc := range []struct {
			name string
			cmds [][]string // run in turn; a batch repeats them
		}{
			{"getbit", [][]string{{"getbit", "bm", last}}},
			// Set and clear: each SETBIT changes the bit, so each copies.
			{"setbit", [][]string{{"setbit", "bm", last, "1"}, {"setbit", "bm", last, "0"}}},
			{"bitcount", [][]string{{"bitcount", "bm"}}},
			{"bitpos", [][]string{{"bitpos", "bm", "0"}}},
			{"bitfield-incrby", [][]string{{"bitfield", "bm", "incrby", "u8", "#7", "1"}}},
		} {
			b.Run(tc.name+"/"+strconv.Itoa(size>>10)+"KB", func(b *testing.B) {
				s := New(Options{})
				defer s.Close()
				Serve(s, encodeArgs([]string{"set", "bm", value}))
				var one []byte
				for _, c := range tc.cmds {
					one = append(one, encodeArgs(c)...)
				}
				batch := 1000
				if size > 1<<10 {
					batch = 10
				}
				var in []byte
				for range batch / len(tc.cmds) {
					in = append(in, one...)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i += batch {
					Serve(s, in)
				}
			})
		}
	}
}
