package goredis_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/nxkv/nxkv/internal/redistest"
	"github.com/nxkv/nxkv/lockapi/goredis"
)

// fake84 is a go-redis hook that makes a Redis 7 server look like 8.4 to
// the Backend: INFO reports redis_version:8.4.0, and DELEX key IFEQ v and
// SET key v IFEQ v PX ms are carried out by equivalent scripts on a second
// client. It records the commands the Backend sent.
type fake84 struct {
	raw *redis.Client

	mu   sync.Mutex
	sent []string // guarded by mu
}

var versionLine = regexp.MustCompile(`redis_version:[0-9.]+`)

func (f *fake84) DialHook(next redis.DialHook) redis.DialHook { return next }
func (f *fake84) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (f *fake84) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		f.mu.Lock()
		f.sent = append(f.sent, cmd.Name())
		f.mu.Unlock()
		args := cmd.Args()
		switch {
		case cmd.Name() == "info":
			err := next(ctx, cmd)
			if sc, ok := cmd.(*redis.StringCmd); ok && err == nil {
				sc.SetVal(versionLine.ReplaceAllString(sc.Val(), "redis_version:8.4.0"))
			}
			return err
		case cmd.Name() == "delex" && len(args) == 4 && strings.EqualFold(args[2].(string), "IFEQ"):
			n, err := f.raw.Eval(ctx, `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`,
				[]string{args[1].(string)}, args[3]).Int64()
			if err != nil {
				cmd.SetErr(err)
				return err
			}
			cmd.(*redis.Cmd).SetVal(n)
			return nil
		case cmd.Name() == "set" && len(args) == 7 && strings.EqualFold(args[3].(string), "IFEQ"):
			n, err := f.raw.Eval(ctx, `if redis.call('GET', KEYS[1]) == ARGV[2] then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3]) return 1 end return 0`,
				[]string{args[1].(string)}, args[2], args[4], args[6]).Int64()
			if err != nil {
				cmd.SetErr(err)
				return err
			}
			if n == 0 {
				cmd.SetErr(redis.Nil)
				return redis.Nil
			}
			cmd.(*redis.Cmd).SetVal("OK")
			return nil
		}
		return next(ctx, cmd)
	}
}

func (f *fake84) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.sent
	f.sent = nil
	return s
}

// TestNativeCommandsWhenDetected drives the native path against a server
// dressed up as 8.4 by fake84: the probe selects DELEX and SET IFEQ, and
// their replies are read correctly.
func TestNativeCommandsWhenDetected(t *testing.T) {
	srv := redistest.Start(t)
	raw, _ := newClient(t, srv.Addr)
	c, _ := newClient(t, srv.Addr)
	f := &fake84{raw: raw}
	c.AddHook(f)
	b := goredis.New(c, goredis.Options{}) // NativeAuto
	ctx := context.Background()
	if _, ok, err := b.Acquire(ctx, "n", "mine", time.Minute); !ok || err != nil {
		t.Fatalf("Acquire = %v, %v", ok, err)
	}
	f.take()
	if ok, err := b.Refresh(ctx, "n", "theirs", time.Hour); ok || err != nil {
		t.Fatalf("Refresh(theirs) = %v, %v, want false, nil", ok, err)
	}
	if got := f.take(); !slices.Equal(got, []string{"info", "set"}) {
		t.Fatalf("first Refresh sent %v, want [info set] (probe, then SET IFEQ)", got)
	}
	if ok, err := b.Refresh(ctx, "n", "mine", time.Hour); !ok || err != nil {
		t.Fatalf("Refresh(mine) = %v, %v, want true, nil", ok, err)
	}
	if d := raw.PTTL(ctx, "n").Val(); d <= 59*time.Minute {
		t.Fatalf("PTTL after a native Refresh(1h) = %v, want about 1h", d)
	}
	if ok, err := b.Release(ctx, "n", "theirs"); ok || err != nil {
		t.Fatalf("Release(theirs) = %v, %v, want false, nil", ok, err)
	}
	if ok, err := b.Release(ctx, "n", "mine"); !ok || err != nil {
		t.Fatalf("Release(mine) = %v, %v, want true, nil", ok, err)
	}
	if got := f.take(); !slices.Equal(got, []string{"set", "delex", "delex"}) {
		t.Fatalf("later calls sent %v, want [set delex delex] (no more probes, no scripts)", got)
	}
	if n := raw.Exists(ctx, "n").Val(); n != 0 {
		t.Fatalf("EXISTS after a native Release = %d, want 0", n)
	}
}

func TestNativeVersion(t *testing.T) {
	tests := []struct {
		info string
		want bool
	}{
		{"# Server\r\nredis_version:8.4.0\r\nredis_git_sha1:0\r\n", true},
		{"redis_version:8.4.1\r\n", true},
		{"redis_version:8.10.0\r\n", true},
		{"redis_version:9.0.0\r\n", true},
		{"redis_version:10.2.3\r\n", true},
		{"redis_version:8.3.9\r\n", false},
		{"redis_version:8.2.0\r\n", false},
		{"redis_version:7.0.15\r\n", false},
		{"redis_version:7.2.4\r\nvalkey_version:8.1.0\r\n", false}, // Valkey: no DELEX
		{"redis_version:8\r\n", false},
		{"redis_version:x.y\r\n", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := goredis.NativeVersion(tt.info); got != tt.want {
			t.Errorf("NativeVersion(%q) = %v, want %v", tt.info, got, tt.want)
		}
	}
}
