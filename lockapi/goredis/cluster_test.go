package goredis_test

import (
	"context"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/nxkv/nxkv/internal/redistest"
	"github.com/nxkv/nxkv/lockapi/goredis"
)

// startProcess runs redis-server with args (plus a free loopback port and
// no persistence), killed by PID at cleanup, and returns its address.
func startProcess(t *testing.T, args ...string) string {
	t.Helper()
	return redistest.Start(t, args...).Addr
}

// startClusterNode starts a one-node Redis Cluster (cluster mode on, every
// slot assigned to it) and returns a cluster client for it.
func startClusterNode(t *testing.T) *redis.ClusterClient {
	t.Helper()
	dir := t.TempDir()
	addr := startProcess(t, "--cluster-enabled", "yes",
		"--cluster-config-file", filepath.Join(dir, "nodes.conf"), "--dir", dir)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	// go-redis's own dial retries wait for the server to listen.
	admin := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true, DialerRetries: 100})
	defer admin.Close()
	if err := admin.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err(); err != nil {
		t.Fatalf("CLUSTER ADDSLOTSRANGE: %v", err)
	}
	// A fresh master stays CLUSTERDOWN for about two seconds; the cluster
	// client's retries (with backoff) ride that out on the first command.
	cc := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs: []string{addr}, DisableIdentity: true,
		MaxRetries: 60, MinRetryBackoff: 50 * time.Millisecond, MaxRetryBackoff: 100 * time.Millisecond,
	})
	t.Cleanup(func() { cc.Close() })
	if err := cc.Set(ctx, "ready", "1", 0).Err(); err != nil {
		t.Fatalf("cluster never became ready: %v", err)
	}
	return cc
}

// TestCluster runs the Backend against a Redis Cluster, where a script
// touching keys of two slots fails with CROSSSLOT: the fencing counter must
// share the lock key's slot, for plain and hash-tagged keys alike.
func TestCluster(t *testing.T) {
	cc := startClusterNode(t)
	ctx := context.Background()

	// The server does enforce the rule: a script over an untagged key and
	// its naive counter name is refused. (So this test can fail.)
	naive := redis.NewScript(`return redis.call('INCR', KEYS[2])`)
	if err := naive.Run(ctx, cc, []string{"orders", "orders:fence"}, "v").Err(); err == nil || !strings.Contains(err.Error(), "CROSSSLOT") {
		t.Fatalf("script over orders and orders:fence = %v, want CROSSSLOT", err)
	}

	b := goredis.New(cc, goredis.Options{})
	for _, key := range []string{"orders", "{user:1}:lock", "lock:{user:1}", "a{", "{{a}", "}{a}", "job}x", "a}b", "x{}y", "{}{x}", "{", "}"} {
		var last int64
		for i := 0; i < 3; i++ {
			fence, ok, err := b.Acquire(ctx, key, "v", time.Minute)
			if !ok || err != nil || fence <= last {
				t.Fatalf("Acquire(%q) #%d = %d, %v, %v, want ok with fence > %d", key, i, fence, ok, err, last)
			}
			last = fence
			if ok, err := b.Refresh(ctx, key, "v", time.Minute); !ok || err != nil {
				t.Fatalf("Refresh(%q) = %v, %v", key, ok, err)
			}
			if _, ok, err := b.PTTL(ctx, key, "v"); !ok || err != nil {
				t.Fatalf("PTTL(%q) = %v, %v", key, ok, err)
			}
			if ok, err := b.Release(ctx, key, "v"); !ok || err != nil {
				t.Fatalf("Release(%q) = %v, %v", key, ok, err)
			}
		}
	}
}

// TestClusterKeySlot asks the server (CLUSTER KEYSLOT) for the slots of
// keys and their fencing counters: they must agree, and agree with the
// package's own slot computation.
func TestClusterKeySlot(t *testing.T) {
	cc := startClusterNode(t)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 4))
	const alphabet = "ab{}:x9"
	keys := []string{"orders", "job}x", "{user:1}:lock", "", "123456789"}
	for range 300 {
		b := make([]byte, r.IntN(10))
		for j := range b {
			b[j] = alphabet[r.IntN(len(alphabet))]
		}
		keys = append(keys, string(b))
	}
	for _, key := range keys {
		ks, err := cc.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		fs, err := cc.ClusterKeySlot(ctx, goredis.FenceKey(key)).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ks != fs || int(ks) != goredis.Slot(key) {
			t.Fatalf("KEYSLOT(%q) = %d, KEYSLOT(FenceKey) = %d, Slot = %d, want all equal", key, ks, fs, goredis.Slot(key))
		}
	}
}

// TestSentinel runs the Backend through a Sentinel failover client: a
// master started by redistest, one sentinel monitoring it, and
// redis.NewUniversalClient with MasterName.
func TestSentinel(t *testing.T) {
	master := redistest.Start(t)
	host, port, _ := net.SplitHostPort(master.Addr)
	conf := filepath.Join(t.TempDir(), "sentinel.conf")
	if err := os.WriteFile(conf, []byte("sentinel monitor nxkv "+host+" "+port+" 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sentinel := startProcess(t, conf, "--sentinel")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	uc := redis.NewUniversalClient(&redis.UniversalOptions{
		Addrs: []string{sentinel}, MasterName: "nxkv", DisableIdentity: true,
		DialerRetries: 100, // rides out the sentinel's start-up
	})
	t.Cleanup(func() { uc.Close() })
	b := goredis.New(uc, goredis.Options{})
	fence, ok, err := b.Acquire(ctx, "s", "v", time.Minute)
	if !ok || err != nil || fence != 1 {
		t.Fatalf("Acquire through Sentinel = %d, %v, %v, want 1, true, nil", fence, ok, err)
	}
	direct, _ := newClient(t, master.Addr)
	if v := direct.Get(ctx, "s").Val(); v != "v" {
		t.Fatalf("GET s on the master = %q, want v", v)
	}
	if ok, err := b.Release(ctx, "s", "v"); !ok || err != nil {
		t.Fatalf("Release through Sentinel = %v, %v", ok, err)
	}
}
