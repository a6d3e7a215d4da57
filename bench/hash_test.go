package main

import (
	"hash/maphash"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// BenchmarkHash compares what hashing one of the suite's keys costs with
// xxhash, which the engine's shards once used, and with the Go runtime's
// seeded hash through hash/maphash, which they use now (called directly,
// without maphash's wrapper, the shard saves a further ~2 ns; see package
// shard). It lives here so that the main module need not require xxhash.
//
//	go test -run='^$' -bench=Hash -count=6 ./bench | tee hash.txt && benchstat hash.txt
func BenchmarkHash(b *testing.B) {
	keys := makeKeys(1024)
	var sink uint64
	b.Run("xxhash", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sink += xxhash.Sum64String(keys[i&1023])
		}
	})
	b.Run("maphash", func(b *testing.B) {
		seed := maphash.MakeSeed()
		for i := 0; i < b.N; i++ {
			sink += maphash.String(seed, keys[i&1023])
		}
	})
	_ = sink
}
