package resp

// Memory and speed of the typed values' structures, measured where the
// package doc quotes their costs per element.

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/nxkv/nxkv/engine"
)

// liveHeap returns the live heap after a collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkTypeMemory reports the bytes per element each structure holds
// beyond its elements' own bytes, with 100,000 elements of 8-byte members
// (the members' and values' bytes are allocated before the baseline).
func BenchmarkTypeMemory(b *testing.B) {
	const n = 100_000
	members := make([]string, n)
	for i := range members {
		members[i] = "m" + strconv.Itoa(10_000_000 + i)[1:]
	}
	s := New(Options{})
	defer s.Close()
	limits := func(entries int64) {
		for _, i := range []int{limitHashEntries, limitZsetEntries} {
			s.encLimits[i].Store(entries)
		}
	}
	for _, tc := range []struct {
		name  string
		small bool
		build func() engine.Object
	}{
		{"hash=hashtable", false, func() engine.Object {
			h := &hashObj{}
			for _, m := range members {
				h.set(s, m, m)
			}
			return h
		}},
		{"hash=listpack", true, func() engine.Object {
			h := &hashObj{}
			for _, m := range members {
				h.set(s, m, m)
			}
			return h
		}},
		{"set=intset", true, func() engine.Object {
			st := &setObj{}
			for i := range members {
				st.add(s, strconv.Itoa(i))
			}
			return st
		}},
		{"set=hashtable", false, func() engine.Object {
			st := &setObj{}
			for _, m := range members {
				st.add(s, m)
			}
			return st
		}},
		{"list=quicklist", false, func() engine.Object {
			l := &listObj{}
			for _, m := range members {
				l.push(m, listTail)
			}
			return l
		}},
		{"zset=listpack", true, func() engine.Object {
			z := &zsetObj{}
			for i, m := range members {
				z.small = append(z.small, zentry{m, float64(i)})
			}
			return z
		}},
		{"zset=skiplist", false, func() engine.Object {
			z := &zsetObj{}
			for i, m := range members {
				z.insert(s, zentry{m, float64(i)})
			}
			return z
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var per float64
			for range b.N {
				if tc.small {
					limits(1 << 30)
					s.encLimits[limitSetIntEntries].Store(1 << 30)
				} else {
					limits(128)
					s.encLimits[limitSetIntEntries].Store(512)
				}
				base := liveHeap()
				o := tc.build()
				per = float64(liveHeap()-base) / n
				runtime.KeepAlive(o)
			}
			b.ReportMetric(per, "B/element")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkTypedCommands runs pipelined typed commands through the whole
// dispatcher of one connection, without a network: what each costs the
// server.
func BenchmarkTypedCommands(b *testing.B) {
	for _, tc := range []struct {
		name  string
		setup [][]string
		cmd   []string
	}{
		{"lpush", nil, []string{"lpush", "mylist", "xxx"}},
		{"lpop", [][]string{{"rpush", "mylist", "a"}}, []string{"rpush", "mylist", "xxx"}},
		{"sadd", nil, []string{"sadd", "myset", "element:000000000001"}},
		{"hset", nil, []string{"hset", "myhash", "element:000000000001", "xxx"}},
		{"zadd", nil, []string{"zadd", "myzset", "0", "element:000000000001"}},
		{"get", [][]string{{"set", "k", "v"}}, []string{"get", "k"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := New(Options{})
			defer s.Close()
			var setup, in []byte
			for _, c := range tc.setup {
				setup = append(setup, encodeArgs(c)...)
			}
			Serve(s, setup)
			one := encodeArgs(tc.cmd)
			for range 1000 {
				in = append(in, one...)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += 1000 {
				Serve(s, in)
			}
		})
	}
}

// encodeArgs returns args as a RESP request.
func encodeArgs(args []string) []byte {
	b := []byte("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b = append(b, "$"+strconv.Itoa(len(a))+"\r\n"+a+"\r\n"...)
	}
	return b
}
