package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/nxkv/nxkv/internal/redisproc"
)

// redisServer is a redis-server process the suite started on a free loopback
// port with persistence off (see internal/redisproc). Kill stops it; the
// process also dies with the suite (Pdeathsig) if the suite is killed before
// it can clean up.
type redisServer struct {
	*redisproc.Server
	Version string
}

// startRedis launches redis-server from PATH. It returns an error saying why
// when the binary is missing or the server does not answer.
func startRedis() (*redisServer, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("no redis-server on PATH (install it, e.g. apt-get install redis-server, or pass -redis ADDR)")
	}
	p, err := redisproc.Start(bin)
	if err != nil {
		return nil, err
	}
	v, err := redisVersion(p.Addr)
	if err != nil {
		p.Kill()
		return nil, fmt.Errorf("redis-server at %s: %w", p.Addr, err)
	}
	return &redisServer{Server: p, Version: v}, nil
}

// Kill stops the server with SIGKILL and waits for it; it is idempotent,
// safe for concurrent use (the signal handler and the normal exit path may
// both call it) and does nothing on a nil server.
func (s *redisServer) Kill() {
	if s == nil || s.Server == nil {
		return
	}
	s.Server.Kill()
}

// redisVersion asks a server for its version (INFO server).
func redisVersion(addr string) (string, error) {
	c := newRedisClient(addr, 1)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return v, nil
		}
	}
	return "unknown", nil
}

// newRedisClient returns a go-redis client with a pool large enough for the
// 64-goroutine lock contention, RESP2 and no CLIENT SETINFO or maintenance
// notifications, which miniredis does not speak.
func newRedisClient(addr string, poolSize int) *redis.Client {
	return redis.NewClient(&redis.Options{
		Addr:                     addr,
		Protocol:                 2,
		PoolSize:                 poolSize,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
}

// target is one server the Redis peers run against.
type target struct {
	Name  string // "Redis" or "miniredis"
	Addr  string
	close func()
}

// startMiniredis runs a miniredis in this process on a loopback port.
func startMiniredis() (*target, error) {
	m, err := miniredis.Run()
	if err != nil {
		return nil, err
	}
	return &target{Name: "miniredis", Addr: m.Addr(), close: m.Close}, nil
}
