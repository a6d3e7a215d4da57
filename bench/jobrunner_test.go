package main

// BenchmarkJobRunner is the test-double workload of a service that keeps
// more than its locks in Redis: an idempotent job runner takes a redislock
// lock per job, writes the job's record as a hash, queues the job on a
// list, and a worker pops it (BRPOP), marks the record done and releases
// the lock. It runs over go-redis against nxkv-server on loopback TCP and
// against miniredis, side by side in one run; each iteration is one job.

import (
	"context"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"

	"github.com/nxkv/nxkv/resp"
)

// benchJobs runs b.N jobs against the server at addr.
func benchJobs(b *testing.B, addr string) {
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 4})
	defer c.Close()
	b.ResetTimer()
	if err := runJobs(context.Background(), c, redislock.New(c), 0, b.N); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkJobRunner(b *testing.B) {
	b.Run("server=nxkv-server", func(b *testing.B) {
		s := resp.New(resp.Options{})
		defer s.Close()
		if err := s.Start(); err != nil {
			b.Fatal(err)
		}
		benchJobs(b, s.Addr())
	})
	b.Run("server=miniredis", func(b *testing.B) {
		m, err := miniredis.Run()
		if err != nil {
			b.Fatal(err)
		}
		defer m.Close()
		benchJobs(b, m.Addr())
	})
}
