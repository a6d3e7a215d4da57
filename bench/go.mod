module github.com/nxkv/nxkv/bench

go 1.25.0

require (
	github.com/gomodule/redigo v1.9.3
	github.com/nxkv/nxkv v0.0.0
	github.com/redis/rueidis v1.0.79
)

require (
	github.com/klauspost/cpuid/v2 v2.2.10 // indirect
	github.com/zeebo/xxh3 v1.1.0 // indirect
)

require (
	github.com/alicebob/miniredis/v2 v2.40.0
	github.com/benbjohnson/clock v1.3.5 // indirect
	github.com/bsm/redislock v0.9.4
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/go-redsync/redsync/v4 v4.17.0
	github.com/maypok86/otter/v2 v2.4.0
	github.com/puzpuzpuz/xsync/v4 v4.5.0
	github.com/redis/go-redis/v9 v9.22.0
	github.com/yuin/gopher-lua v1.1.1 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	golang.org/x/sync v0.21.0
	golang.org/x/sys v0.47.0 // indirect
)

replace github.com/nxkv/nxkv => ../
