package resp

import (
	"strconv"
	"testing"
)

// BenchmarkDumpRestore times DUMP and RESTORE ... REPLACE of a string and
// of a 1,000-element hash, list, set and sorted set, through one
// connection's dispatcher without a network.
func BenchmarkDumpRestore(b *testing.B) {
	for _, tc := range []struct {
		name  string
		build []string
	}{
		{"string", []string{"set", "k", "a value of forty bytes, more or less...."}},
		{"hash", []string{"hset", "k"}},
		{"list", []string{"rpush", "k"}},
		{"set", []string{"sadd", "k"}},
		{"zset", []string{"zadd", "k"}},
	} {
		s := New(Options{})
		args := tc.build
		if len(args) == 2 {
			for i := range 1000 {
				m := "member:" + strconv.Itoa(i)
				switch tc.name {
				case "hash":
					args = append(args, m, strconv.Itoa(i))
				case "zset":
					args = append(args, strconv.Itoa(i), m)
				default:
					args = append(args, m)
				}
			}
		}
		Serve(s, encodeArgs(args))
		out := Serve(s, encodeArgs([]string{"dump", "k"}))
		payload := string(out[len(out)-2-payloadLen(out) : len(out)-2])
		b.Run("dump/"+tc.name, func(b *testing.B) {
			in := encodeArgs([]string{"dump", "k"})
			b.ReportAllocs()
			for range b.N {
				Serve(s, in)
			}
		})
		b.Run("restore/"+tc.name, func(b *testing.B) {
			in := encodeArgs([]string{"restore", "k", "0", payload, "replace"})
			b.ReportAllocs()
			for range b.N {
				Serve(s, in)
			}
		})
		s.Close()
	}
}

// payloadLen returns the length of the bulk string reply r ("$n\r\n...").
func payloadLen(r []byte) int {
	n := 0
	for _, c := range r[1:] {
		if c == '\r' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}
