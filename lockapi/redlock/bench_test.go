package redlock_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/inproc"
	"github.com/nxkv/nxkv/lockapi/redlock"
)

// BenchmarkAcquireRelease measures one Redlock Acquire plus Release (two
// parallel rounds) over three nodes: in-process engines (the algorithm's
// own cost: goroutines per round, bookkeeping) and real redis-servers on
// loopback (skipped without redis-server).
func BenchmarkAcquireRelease(b *testing.B) {
	b.Run("nodes=3,inproc", func(b *testing.B) {
		var nodes []lockapi.Backend
		for i := 0; i < 3; i++ {
			e := engine.New(engine.Options{})
			b.Cleanup(func() { e.Close() })
			nodes = append(nodes, inproc.New(e, inproc.Options{}))
		}
		rl, err := redlock.New(nodes, redlock.Options{})
		if err != nil {
			b.Fatal(err)
		}
		benchCycle(b, rl)
	})
	b.Run("nodes=3,redis", func(b *testing.B) {
		cl := startCluster(b, 3)
		benchCycle(b, cl.redlock(b, redlock.Options{}))
	})
}

func benchCycle(b *testing.B, rl *redlock.Redlock) {
	ctx := context.Background()
	values := make([]string, 1024)
	for i := range values {
		values[i] = fmt.Sprintf("v%d", i)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		v := values[i%len(values)]
		if _, ok, err := rl.Acquire(ctx, "bench", v, 10*time.Second); !ok || err != nil {
			b.Fatalf("Acquire = %v, %v", ok, err)
		}
		if ok, err := rl.Release(ctx, "bench", v); !ok || err != nil {
			b.Fatalf("Release = %v, %v", ok, err)
		}
	}
}
