package goredis_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nxkv/nxkv/internal/redistest"
	"github.com/nxkv/nxkv/lockapi/goredis"
)

// BenchmarkAcquireRelease measures one Acquire plus Release (two round
// trips) against a local redis-server; skipped without redis-server.
func BenchmarkAcquireRelease(b *testing.B) {
	srv := redistest.Start(b)
	c, _ := newClient(b, srv.Addr)
	for _, v := range []struct {
		name string
		opts goredis.Options
	}{
		{"fencing", goredis.Options{}},
		{"nofence", goredis.Options{NoFencing: true}},
	} {
		b.Run(v.name, func(b *testing.B) {
			be := goredis.New(c, v.opts)
			warm(be)
			ctx := context.Background()
			values := make([]string, 1024)
			for i := range values {
				values[i] = fmt.Sprintf("v%d", i)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				val := values[i%len(values)]
				if _, ok, err := be.Acquire(ctx, "bench", val, 10*time.Second); !ok || err != nil {
					b.Fatalf("Acquire = %v, %v", ok, err)
				}
				if ok, err := be.Release(ctx, "bench", val); !ok || err != nil {
					b.Fatalf("Release = %v, %v", ok, err)
				}
			}
		})
	}
}

// BenchmarkRefresh measures one Refresh (one round trip).
func BenchmarkRefresh(b *testing.B) {
	srv := redistest.Start(b)
	c, _ := newClient(b, srv.Addr)
	be := goredis.New(c, goredis.Options{})
	warm(be)
	ctx := context.Background()
	if _, ok, err := be.Acquire(ctx, "bench", "v", time.Minute); !ok || err != nil {
		b.Fatalf("Acquire = %v, %v", ok, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := be.Refresh(ctx, "bench", "v", time.Minute); !ok || err != nil {
			b.Fatalf("Refresh = %v, %v", ok, err)
		}
	}
}
