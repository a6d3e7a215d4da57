package resp_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/nxkv/nxkv/internal/redistest"
	"github.com/nxkv/nxkv/resp"
)

// redislock v0.9.4's obtain and release scripts, as it sends them.
var (
	obtainScript  = redis.NewScript(lockScripts[0])
	releaseScript = redis.NewScript(lockScripts[2])
)

// lockCycle is one redislock Obtain + Release on key: EVALSHA of its obtain
// script with a fresh 22-character token, then EVALSHA of its release
// script, over go-redis.
func lockCycle(ctx context.Context, b *testing.B, c *redis.Client, key string, tok []byte) {
	_, _ = rand.Read(tok[:16])
	token := base64.RawURLEncoding.EncodeToString(tok[:16])
	if err := obtainScript.Run(ctx, c, []string{key}, token, "22", "60000").Err(); err != nil {
		b.Fatalf("obtain: %v", err)
	}
	if n, err := releaseScript.Run(ctx, c, []string{key}, token).Int(); err != nil || n != 1 {
		b.Fatalf("release = %d, %v", n, err)
	}
}

// setNXCycle is SET NX PX followed by the compare-and-delete script.
func setNXCycle(ctx context.Context, b *testing.B, c *redis.Client, key string) {
	if ok, err := c.SetNX(ctx, key, "token", time.Minute).Result(); err != nil || !ok {
		b.Fatalf("SET NX PX = %v, %v", ok, err)
	}
	if n, err := releaseScript.Run(ctx, c, []string{key}, "token").Int(); err != nil || n != 1 {
		b.Fatalf("release = %d, %v", n, err)
	}
}

// benchClients returns go-redis clients for nxkv over TCP, nxkv over the
// in-memory dialer and, if present, a real redis-server, by name.
func benchClients(b *testing.B) []struct {
	name string
	c    *redis.Client
} {
	s := resp.RunT(b)
	out := []struct {
		name string
		c    *redis.Client
	}{
		{"nxkv-tcp", redis.NewClient(&redis.Options{Addr: s.Addr(), Protocol: 2})},
		{"nxkv-memory", redis.NewClient(&redis.Options{Dialer: s.Dial, Protocol: 2})},
	}
	rs := redistest.Start(b)
	out = append(out, struct {
		name string
		c    *redis.Client
	}{"redis-server", redis.NewClient(&redis.Options{Addr: rs.Addr, Protocol: 2})})
	for _, x := range out {
		b.Cleanup(func() { x.c.Close() })
	}
	return out
}

// BenchmarkLockCycle is one lock cycle per operation, over go-redis, one
// client: redislock's Obtain+Release (its two EVALSHA scripts) and SET NX
// PX + the compare-and-delete script, against nxkv over TCP, nxkv over the
// in-memory dialer and redis-server over TCP.
func BenchmarkLockCycle(b *testing.B) {
	ctx := context.Background()
	for _, x := range benchClients(b) {
		tok := make([]byte, 16)
		b.Run("redislock/"+x.name, func(b *testing.B) {
			lockCycle(ctx, b, x.c, "bench:lock", tok) // loads the scripts
			b.ResetTimer()
			for b.Loop() {
				lockCycle(ctx, b, x.c, "bench:lock", tok)
			}
		})
		b.Run("setnx-cad/"+x.name, func(b *testing.B) {
			setNXCycle(ctx, b, x.c, "bench:lock")
			b.ResetTimer()
			for b.Loop() {
				setNXCycle(ctx, b, x.c, "bench:lock")
			}
		})
	}
}

// BenchmarkScriptServerSide measures the server's own cost of script calls,
// with no client or network: redislock's obtain and release EVALSHAs (each
// b.N is one call), run through one connection's dispatcher. allocs/op is
// the server-side allocations per script call.
func BenchmarkScriptServerSide(b *testing.B) {
	s := resp.New(resp.Options{})
	defer s.Close()
	load := resp.Serve(s, append(encode([]string{"script", "load", lockScripts[0]}), encode([]string{"script", "load", lockScripts[2]})...))
	shas := tokens(load)
	obtain, release := shas[1], shas[3]
	const batch = 512
	var input []byte
	for i := range batch / 2 {
		tok := "tok" + strconv.Itoa(i) + "-abcdefghijklmnopq"
		input = append(input, encode([]string{"evalsha", obtain, "1", "bench:lock", tok, "22", "60000"})...)
		input = append(input, encode([]string{"evalsha", release, "1", "bench:lock", tok})...)
	}
	b.ReportAllocs()
	// Each Serve runs batch calls; b.N is rounded up to a whole batch, so
	// ns/op and allocs/op slightly overstate the cost per call.
	for i := 0; i < b.N; i += batch {
		out := resp.Serve(s, input)
		if len(out) != batch/2*len("+OK\r\n:1\r\n") {
			b.Fatalf("unexpected replies: %q", out[:min(len(out), 200)])
		}
	}
}

// BenchmarkCommands is single commands over go-redis against nxkv (TCP and
// in-memory) and redis-server: SET, GET, INCR.
func BenchmarkCommands(b *testing.B) {
	ctx := context.Background()
	for _, x := range benchClients(b) {
		b.Run("set/"+x.name, func(b *testing.B) {
			for b.Loop() {
				if err := x.c.Set(ctx, "bench:k", "value", 0).Err(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("get/"+x.name, func(b *testing.B) {
			for b.Loop() {
				if err := x.c.Get(ctx, "bench:k").Err(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("incr/"+x.name, func(b *testing.B) {
			for b.Loop() {
				if err := x.c.Incr(ctx, "bench:n").Err(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkScriptOperators is a script that concatenates in a loop and
// does arithmetic on a numeric string argument: the operators that run
// through this package's own builtins rather than the Lua VM's.
func BenchmarkScriptOperators(b *testing.B) {
	s := resp.New(resp.Options{})
	defer s.Close()
	script := `local s = '' local n = 0 for i = 1, tonumber(ARGV[1]) do s = s .. i .. ',' n = n + ARGV[2] end return {#s, n}`
	sha := tokens(resp.Serve(s, encode([]string{"script", "load", script})))[1]
	call := encode([]string{"evalsha", sha, "0", "100", "3"})
	b.ReportAllocs()
	for b.Loop() {
		if out := resp.Serve(s, call); !bytes.Equal(out, []byte("*2\r\n:292\r\n:300\r\n")) {
			b.Fatalf("unexpected reply: %q", out)
		}
	}
}

// BenchmarkScriptConcatChain builds keys from a six-operand chain of
// strings and a number, 200 times per call: the shape of most
// concatenation in scripts.
func BenchmarkScriptConcatChain(b *testing.B) {
	s := resp.New(resp.Options{})
	defer s.Close()
	script := `local s for i = 1, 200 do s = ARGV[1] .. ':' .. i .. ':' .. ARGV[2] .. ARGV[3] end return s`
	sha := tokens(resp.Serve(s, encode([]string{"script", "load", script})))[1]
	call := encode([]string{"evalsha", sha, "0", "lock", "owner", "-x"})
	b.ReportAllocs()
	for b.Loop() {
		if out := resp.Serve(s, call); !bytes.Equal(out, []byte("$16\r\nlock:200:owner-x\r\n")) {
			b.Fatalf("unexpected reply: %q", out)
		}
	}
}
