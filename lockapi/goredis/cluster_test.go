package goredis_test

import (
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/nxkv/nxkv/internal/redistest"
	"github.com/nxkv/nxkv/lockapi/goredis"
)

// startClusterNode starts a one-node Redis Cluster (cluster mode on, every
// slot assigned to it) on a free loopback port, killed by PID at cleanup.
// internal/redistest has no cluster mode, so this launches redis-server
// itself, with redistest's rule for a missing binary.
func startClusterNode(t *testing.T) *redis.ClusterClient {
	t.Helper()
	bin := redistest.Binary(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	cmd := exec.Command(bin,
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no",
		"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(dir, "nodes.conf"),
		"--dir", dir, "--loglevel", "warning",
	)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
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

	b := goredis.New(cc)
	for _, key := range []string{"orders", "{user:1}:lock", "lock:{user:1}", "a{", "{{a}", "}{a}"} {
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
