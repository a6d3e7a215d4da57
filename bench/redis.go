package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// redisServer is a redis-server process the suite started on a free loopback
// port with persistence off. Kill stops it; the process also dies with the
// suite (Pdeathsig) if the suite is killed before it can clean up.
type redisServer struct {
	Addr    string
	Version string
	mu      sync.Mutex
	cmd     *exec.Cmd // guarded by mu; nil once killed
}

// startRedis launches redis-server from PATH. It returns an error saying why
// when the binary is missing or the server does not answer.
func startRedis() (*redisServer, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("no redis-server on PATH (install it, e.g. apt-get install redis-server, or pass -redis ADDR)")
	}
	var last error
	for range 5 {
		port, err := freePort()
		if err != nil {
			last = err
			continue
		}
		s, err := launchRedis(bin, port)
		if err != nil {
			last = err
			continue
		}
		return s, nil
	}
	return nil, fmt.Errorf("could not start %s: %w", bin, last)
}

func launchRedis(bin string, port int) (*redisServer, error) {
	cmd := exec.Command(bin,
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--protected-mode", "yes",
		"--loglevel", "warning",
		"--daemonize", "no",
	)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &redisServer{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd}
	go func() { // drain the log so the server never blocks on a full pipe
		sc := bufio.NewScanner(out)
		for sc.Scan() {
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if v, err := redisVersion(s.Addr); err == nil {
			s.Version = v
			return s, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.Kill()
	return nil, fmt.Errorf("redis-server on port %d did not answer", port)
}

// Kill stops the server with SIGKILL and waits for it; it is idempotent and
// safe for concurrent use (the signal handler and the normal exit path may
// both call it).
func (s *redisServer) Kill() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	_ = s.cmd.Wait()
	s.cmd = nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
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
