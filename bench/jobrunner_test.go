package main

// BenchmarkJobRunner is the test-double workload of a service that keeps
// more than its locks in Redis: an idempotent job runner takes a redislock
// lock per job, writes the job's record as a hash, queues the job on a
// list, and a worker pops it (BRPOP), marks the record done and releases
// the lock. It runs over go-redis against nxkv-server on loopback TCP and
// against miniredis, side by side in one run; each iteration is one job.

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"

	"github.com/nxkv/nxkv/resp"
)

// runJobs runs b.N jobs against the server at addr.
func runJobs(b *testing.B, addr string) {
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 4})
	defer c.Close()
	locker := redislock.New(c)
	b.ResetTimer()
	for i := range b.N {
		id := "job:" + strconv.Itoa(i%1024)
		lock, err := locker.Obtain(ctx, "lock:"+id, 10*time.Second, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := c.HSet(ctx, id, "state", "queued", "attempt", i, "owner", lock.Token()).Err(); err != nil {
			b.Fatal(err)
		}
		if err := c.LPush(ctx, "queue", id).Err(); err != nil {
			b.Fatal(err)
		}
		got, err := c.BRPop(ctx, time.Second, "queue").Result()
		if err != nil || got[1] != id {
			b.Fatalf("BRPOP: %q %v", got, err)
		}
		if err := c.HSet(ctx, id, "state", "done").Err(); err != nil {
			b.Fatal(err)
		}
		if err := lock.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkJobRunner(b *testing.B) {
	b.Run("server=nxkv-server", func(b *testing.B) {
		s := resp.New(resp.Options{})
		defer s.Close()
		if err := s.Start(); err != nil {
			b.Fatal(err)
		}
		runJobs(b, s.Addr())
	})
	b.Run("server=miniredis", func(b *testing.B) {
		m, err := miniredis.Run()
		if err != nil {
			b.Fatal(err)
		}
		defer m.Close()
		runJobs(b, m.Addr())
	})
}
