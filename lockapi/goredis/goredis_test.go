package goredis_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/nxkv/nxkv/internal/redistest"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/goredis"
)

// recorder is a go-redis hook that records the name of every command sent
// and can make replies get lost: the command runs on the server but the
// caller sees errLostReply, as when a connection dies after the request was
// written.
type recorder struct {
	mu   sync.Mutex
	cmds []string // guarded by mu
	lose atomic.Int32
}

var errLostReply = errors.New("test: reply lost")

func (r *recorder) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *recorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.mu.Lock()
		r.cmds = append(r.cmds, cmd.Name())
		r.mu.Unlock()
		err := next(ctx, cmd)
		if r.lose.Load() > 0 {
			r.lose.Add(-1)
			cmd.SetErr(errLostReply)
			return errLostReply
		}
		return err
	}
}

func (r *recorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// take returns the commands recorded since the last call.
func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.cmds
	r.cmds = nil
	return c
}

// newClient connects to addr, closing the client at the end of the test.
func newClient(t testing.TB, addr string) (*redis.Client, *recorder) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true})
	t.Cleanup(func() { c.Close() })
	rec := &recorder{}
	c.AddHook(rec)
	return c, rec
}

// advanceScript makes d pass on the server for every key with a TTL: keys
// whose remaining PTTL is <= d are deleted, the others' TTL shrinks by d.
// For a lock this is indistinguishable from time passing, and tests need no
// sleeping.
var advanceScript = redis.NewScript(`
local d = tonumber(ARGV[1])
for _, k in ipairs(redis.call('KEYS', '*')) do
	local t = redis.call('PTTL', k)
	if t >= 0 then
		if t <= d then
			redis.call('DEL', k)
		else
			redis.call('PEXPIRE', k, t - d)
		end
	end
end
return 0`)

// advance moves the server's time for every key by d (whole milliseconds).
func advance(t testing.TB, c redis.UniversalClient, d time.Duration) {
	t.Helper()
	if err := advanceScript.Run(context.Background(), c, nil, d.Milliseconds()).Err(); err != nil {
		t.Fatalf("advance(%v): %v", d, err)
	}
}

// warm loads every script into the server's cache, so that the next calls
// are single EVALSHAs (the first EVALSHA of a script is NOSCRIPT).
func warm(b *goredis.Backend) {
	ctx := context.Background()
	b.Acquire(ctx, "warm", "v", time.Second)
	b.Refresh(ctx, "warm", "v", time.Second)
	b.PTTL(ctx, "warm", "v")
	b.Release(ctx, "warm", "v")
}

func TestAdvanceScript(t *testing.T) {
	srv := redistest.Start(t)
	c, _ := newClient(t, srv.Addr)
	ctx := context.Background()
	c.Set(ctx, "short", "v", 10*time.Second)
	c.Set(ctx, "long", "v", time.Hour)
	c.Set(ctx, "forever", "v", 0)
	advance(t, c, 10*time.Second)
	if n := c.Exists(ctx, "short").Val(); n != 0 {
		t.Errorf("EXISTS short after advancing its whole TTL = %d, want 0", n)
	}
	if d := c.PTTL(ctx, "long").Val(); d > time.Hour-10*time.Second || d < time.Hour-11*time.Second {
		t.Errorf("PTTL long after advancing 10s of 1h = %v, want about 59m50s", d)
	}
	if d := c.PTTL(ctx, "forever").Val(); d != -1 {
		t.Errorf("PTTL forever = %v, want -1 (untouched)", d)
	}
}

// TestFenceKey: every key, with or without braces, gets a counter named
// FencePrefix + "{" + tag + "}" + key in the key's own slot, where tag is
// the key's hash tag when it has one.
func TestFenceKey(t *testing.T) {
	tests := []struct {
		key, tag string // tag "" means: one chosen to match the key's slot
	}{
		{key: "{user:1}:lock", tag: "user:1"},
		{key: "lock:{user:1}", tag: "user:1"},
		{key: "{a}", tag: "a"},
		{key: "a{b}c{d}", tag: "b"}, // only the first tag counts
		{key: "{{a}", tag: "{a"},    // tag "{a"
		{key: "}{a}", tag: "a"},     // tag "a" after a stray '}'
		{key: "{x}}", tag: "x"},     // tag "x"
		{key: "{:fence}", tag: ":fence"},
		{key: "orders"},
		{key: "job}x"}, // no '{': the whole key is hashed
		{key: "a{"},    // no '}' after '{'
		{key: "x{}y"},  // "{}" is no tag
		{key: "{}{x}"}, // the first '{' opens "{}": no tag
		{key: "a}b"},
		{key: "lock:ä"}, // bytes, not runes
		{key: "a b"},
		{key: "{"},
		{key: ""},
	}
	for _, tt := range tests {
		got := goredis.FenceKey(tt.key)
		rest, ok := strings.CutPrefix(got, goredis.FencePrefix+"{")
		end := strings.IndexByte(rest, '}')
		if !ok || end < 0 || rest[end+1:] != tt.key {
			t.Errorf("FenceKey(%q) = %q, want %q + {tag} + key", tt.key, got, goredis.FencePrefix)
			continue
		}
		tag := rest[:end]
		switch {
		case tt.tag != "" && tag != tt.tag:
			t.Errorf("FenceKey(%q) = %q, want the key's own tag %q", tt.key, got, tt.tag)
		case tt.tag == "" && (len(tag) < 1 || len(tag) > 3):
			t.Errorf("FenceKey(%q) = %q, want a chosen tag of 1 to 3 bytes", tt.key, got)
		}
		if slot(got) != slot(tt.key) {
			t.Errorf("slot(FenceKey(%q)=%q) = %d, want slot(key) = %d", tt.key, got, slot(got), slot(tt.key))
		}
	}
}

// TestSlotTags: the table FenceKey draws tags from covers every slot, with
// alphanumeric tags that hash to it; and the package's slot agrees with
// this test's own.
func TestSlotTags(t *testing.T) {
	for s := range 16384 {
		tag := goredis.SlotTag(s)
		if tag == "" || strings.ContainsAny(tag, "{}") || slot(tag) != s {
			t.Fatalf("SlotTag(%d) = %q (slot %d), want a tag of slot %d without braces", s, tag, slot(tag), s)
		}
	}
	for _, key := range []string{"", "orders", "{user:1}:lock", "job}x", "123456789", "{}{x}", "ключ"} {
		if got, want := goredis.Slot(key), slot(key); got != want {
			t.Errorf("Slot(%q) = %d, want %d", key, got, want)
		}
	}
}

// TestFenceKeySameSlot checks random keys built from the characters that
// matter to hash tags: every key's counter shares its slot, and distinct
// keys have distinct counters.
func TestFenceKeySameSlot(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "ab{}:"
	seen := map[string]string{}
	for i := 0; i < 20000; i++ {
		b := make([]byte, r.IntN(9))
		for j := range b {
			b[j] = alphabet[r.IntN(len(alphabet))]
		}
		key := string(b)
		fk := goredis.FenceKey(key)
		if slot(fk) != slot(key) {
			t.Fatalf("slot(FenceKey(%q)=%q) = %d, want %d", key, fk, slot(fk), slot(key))
		}
		if other, ok := seen[fk]; ok && other != key {
			t.Fatalf("keys %q and %q share the counter %q", key, other, fk)
		}
		seen[fk] = key
	}
}

// slot is Redis Cluster's key slot: CRC16 (XMODEM) of the hash tag or the
// key, mod 16384, written here from the Cluster specification.
func slot(key string) int {
	s := key
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if end := strings.IndexByte(key[open+1:], '}'); end > 0 {
			s = key[open+1 : open+1+end]
		}
	}
	return int(crc16(s) & 16383)
}

func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for b := 0; b < 8; b++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

func TestCRC16(t *testing.T) {
	// The check value the Cluster specification gives for its CRC16.
	if got := crc16("123456789"); got != 0x31c3 {
		t.Fatalf("crc16(123456789) = %#x, want 0x31c3", got)
	}
}

func TestFencingIncreasesAcrossReleaseAndExpiry(t *testing.T) {
	srv := redistest.Start(t)
	c, _ := newClient(t, srv.Addr)
	b := goredis.New(c, goredis.Options{})
	ctx := context.Background()
	var last int64
	for i := 0; i < 6; i++ {
		v := fmt.Sprintf("holder-%d", i)
		fence, ok, err := b.Acquire(ctx, "res", v, 10*time.Second)
		if err != nil || !ok {
			t.Fatalf("Acquire #%d = %d, %v, %v, want ok", i, fence, ok, err)
		}
		if fence <= last {
			t.Fatalf("Acquire #%d fence = %d, want > %d", i, fence, last)
		}
		last = fence
		if i%2 == 0 {
			if ok, err := b.Release(ctx, "res", v); !ok || err != nil {
				t.Fatalf("Release #%d = %v, %v, want true", i, ok, err)
			}
		} else {
			advance(t, c, 10*time.Second) // expire instead of release
		}
	}
	// Another key has its own counter.
	if fence, ok, err := b.Acquire(ctx, "other", "v", time.Second); fence != 1 || !ok || err != nil {
		t.Fatalf("Acquire(other) = %d, %v, %v, want 1, true, nil", fence, ok, err)
	}
	// A held key refuses, and does not burn a token.
	if _, ok, err := b.Acquire(ctx, "other", "w", time.Second); ok || err != nil {
		t.Fatalf("Acquire(other) while held = %v, %v, want false, nil", ok, err)
	}
	if n, _ := c.Get(ctx, goredis.FenceKey("other")).Int64(); n != 1 {
		t.Fatalf("counter after a refused Acquire = %d, want 1", n)
	}
}

func TestWithoutFencing(t *testing.T) {
	srv := redistest.Start(t)
	c, _ := newClient(t, srv.Addr)
	b := goredis.New(c, goredis.Options{NoFencing: true})
	ctx := context.Background()
	fence, ok, err := b.Acquire(ctx, "a}b", "v", time.Second)
	if fence != 0 || !ok || err != nil {
		t.Fatalf("Acquire = %d, %v, %v, want 0, true, nil", fence, ok, err)
	}
	if _, ok, _ := b.Acquire(ctx, "a}b", "w", time.Second); ok {
		t.Fatalf("second Acquire ok, want false")
	}
	if n := c.DBSize(ctx).Val(); n != 1 {
		t.Fatalf("DBSIZE = %d, want 1 (no counter key)", n)
	}
}

func TestHeldOperations(t *testing.T) {
	srv := redistest.Start(t)
	c, _ := newClient(t, srv.Addr)
	b := goredis.New(c, goredis.Options{})
	ctx := context.Background()
	if _, ok, err := b.Acquire(ctx, "k", "mine", 10*time.Second); !ok || err != nil {
		t.Fatalf("Acquire = %v, %v", ok, err)
	}
	if ttl, ok, err := b.PTTL(ctx, "k", "mine"); !ok || err != nil || ttl <= 9*time.Second || ttl > 10*time.Second {
		t.Fatalf("PTTL(mine) = %v, %v, %v, want about 10s, true", ttl, ok, err)
	}
	if _, ok, err := b.PTTL(ctx, "k", "theirs"); ok || err != nil {
		t.Fatalf("PTTL(theirs) ok = %v, %v, want false, nil", ok, err)
	}
	if _, ok, err := b.PTTL(ctx, "absent", "mine"); ok || err != nil {
		t.Fatalf("PTTL(absent) ok = %v, %v, want false, nil", ok, err)
	}
	if ok, err := b.Refresh(ctx, "k", "theirs", time.Minute); ok || err != nil {
		t.Fatalf("Refresh(theirs) = %v, %v, want false, nil", ok, err)
	}
	if ok, err := b.Refresh(ctx, "k", "mine", time.Minute); !ok || err != nil {
		t.Fatalf("Refresh(mine) = %v, %v, want true, nil", ok, err)
	}
	if ttl := c.PTTL(ctx, "k").Val(); ttl <= 59*time.Second {
		t.Fatalf("server PTTL after Refresh(1m) = %v, want about 1m", ttl)
	}
	if ok, err := b.Release(ctx, "k", "theirs"); ok || err != nil {
		t.Fatalf("Release(theirs) = %v, %v, want false, nil", ok, err)
	}
	if ok, err := b.Release(ctx, "k", "mine"); !ok || err != nil {
		t.Fatalf("Release(mine) = %v, %v, want true, nil", ok, err)
	}
	if ok, err := b.Release(ctx, "k", "mine"); ok || err != nil {
		t.Fatalf("second Release(mine) = %v, %v, want false, nil", ok, err)
	}
	if ok, err := b.Refresh(ctx, "k", "mine", time.Minute); ok || err != nil {
		t.Fatalf("Refresh after Release = %v, %v, want false, nil", ok, err)
	}
	// A key holding the value without a TTL (someone's plain SET).
	c.Set(ctx, "plain", "mine", 0)
	if ttl, ok, err := b.PTTL(ctx, "plain", "mine"); ttl != -1 || !ok || err != nil {
		t.Fatalf("PTTL(no TTL) = %v, %v, %v, want -1ns, true, nil", ttl, ok, err)
	}
	// A sub-millisecond remainder rounds up: the server never holds less.
	if _, ok, err := b.Acquire(ctx, "round", "v", 1500*time.Microsecond); !ok || err != nil {
		t.Fatalf("Acquire(1.5ms) = %v, %v", ok, err)
	}
}

func TestInvalidArgumentsSendNothing(t *testing.T) {
	srv := redistest.Start(t)
	c, rec := newClient(t, srv.Addr)
	b := goredis.New(c, goredis.Options{})
	ctx := context.Background()
	for _, ttl := range []time.Duration{0, -time.Second, 999 * time.Microsecond, lockapi.MaxTTL + 1} {
		if _, ok, err := b.Acquire(ctx, "k", "v", ttl); ok || !errors.Is(err, goredis.ErrInvalidTTL) || !errors.Is(err, lockapi.ErrInvalidTTL) {
			t.Errorf("Acquire(ttl %v) = %v, %v, want ErrInvalidTTL", ttl, ok, err)
		}
		if ok, err := b.Refresh(ctx, "k", "v", ttl); ok || !errors.Is(err, goredis.ErrInvalidTTL) {
			t.Errorf("Refresh(ttl %v) = %v, %v, want ErrInvalidTTL", ttl, ok, err)
		}
	}
	if cmds := rec.take(); len(cmds) != 0 {
		t.Errorf("commands sent for invalid arguments = %v, want none", cmds)
	}
}

// TestOneRoundTripEach shows that, once the scripts are cached, each
// Backend call is exactly one command.
func TestOneRoundTripEach(t *testing.T) {
	srv := redistest.Start(t)
	c, rec := newClient(t, srv.Addr)
	b := goredis.New(c, goredis.Options{Native: goredis.NativeOff})
	ctx := context.Background()
	warm(b)
	rec.take()
	steps := []struct {
		name string
		call func() error
	}{
		{"Acquire", func() error { _, _, err := b.Acquire(ctx, "k", "v", time.Second); return err }},
		{"Refresh", func() error { _, err := b.Refresh(ctx, "k", "v", time.Second); return err }},
		{"PTTL", func() error { _, _, err := b.PTTL(ctx, "k", "v"); return err }},
		{"Release", func() error { _, err := b.Release(ctx, "k", "v"); return err }},
	}
	for _, s := range steps {
		if err := s.call(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if cmds := rec.take(); !slices.Equal(cmds, []string{"evalsha"}) {
			t.Errorf("%s sent %v, want [evalsha]", s.name, cmds)
		}
	}
}

// TestNoScriptFallback flushes the server's script cache and checks that
// every call still works, through EVALSHA, NOSCRIPT, then EVAL.
func TestNoScriptFallback(t *testing.T) {
	srv := redistest.Start(t)
	c, rec := newClient(t, srv.Addr)
	b := goredis.New(c, goredis.Options{Native: goredis.NativeOff})
	ctx := context.Background()
	flush := func() {
		if err := c.ScriptFlush(ctx).Err(); err != nil {
			t.Fatalf("SCRIPT FLUSH: %v", err)
		}
		rec.take()
	}
	want := []string{"evalsha", "eval"}
	flush()
	if _, ok, err := b.Acquire(ctx, "k", "v", time.Second); !ok || err != nil {
		t.Fatalf("Acquire after SCRIPT FLUSH = %v, %v", ok, err)
	}
	if cmds := rec.take(); !slices.Equal(cmds, want) {
		t.Errorf("Acquire after flush sent %v, want %v", cmds, want)
	}
	flush()
	if ok, err := b.Refresh(ctx, "k", "v", time.Second); !ok || err != nil {
		t.Fatalf("Refresh after SCRIPT FLUSH = %v, %v", ok, err)
	}
	if cmds := rec.take(); !slices.Equal(cmds, want) {
		t.Errorf("Refresh after flush sent %v, want %v", cmds, want)
	}
	flush()
	if _, ok, err := b.PTTL(ctx, "k", "v"); !ok || err != nil {
		t.Fatalf("PTTL after SCRIPT FLUSH = %v, %v", ok, err)
	}
	flush()
	if ok, err := b.Release(ctx, "k", "v"); !ok || err != nil {
		t.Fatalf("Release after SCRIPT FLUSH = %v, %v", ok, err)
	}
	if cmds := rec.take(); !slices.Equal(cmds, want) {
		t.Errorf("Release after flush sent %v, want %v", cmds, want)
	}
	// EVAL cached the script again: the next call is one EVALSHA.
	b.Release(ctx, "k", "v")
	if cmds := rec.take(); !slices.Equal(cmds, []string{"evalsha"}) {
		t.Errorf("Release after the fallback sent %v, want [evalsha]", cmds)
	}
}

func TestNativeVersionDetection(t *testing.T) {
	srv := redistest.Start(t)
	c, rec := newClient(t, srv.Addr)
	ctx := context.Background()
	if v := c.Info(ctx, "server").Val(); !strings.Contains(v, "redis_version:7.") && !strings.Contains(v, "redis_version:6.") {
		t.Skipf("this test expects a server older than 8.4 (Debian's 7.0.15); got %q", firstLine(v, "redis_version"))
	}
	t.Run("auto probes once and falls back to scripts", func(t *testing.T) {
		b := goredis.New(c, goredis.Options{}) // NativeAuto is the default
		b.Acquire(ctx, "auto", "v", time.Second)
		rec.take()
		if ok, err := b.Refresh(ctx, "auto", "v", time.Second); !ok || err != nil {
			t.Fatalf("Refresh = %v, %v", ok, err)
		}
		if cmds := rec.take(); !slices.Equal(cmds, []string{"info", "evalsha", "eval"}) {
			t.Errorf("first Refresh sent %v, want [info evalsha eval]", cmds)
		}
		if ok, err := b.Release(ctx, "auto", "v"); !ok || err != nil {
			t.Fatalf("Release = %v, %v", ok, err)
		}
		if cmds := rec.take(); slices.Contains(cmds, "info") || slices.Contains(cmds, "delex") {
			t.Errorf("Release after the probe sent %v, want scripts only", cmds)
		}
	})
	t.Run("forced native is rejected and falls back", func(t *testing.T) {
		b := goredis.New(c, goredis.Options{Native: goredis.NativeOn})
		b.Acquire(ctx, "on", "v", time.Second)
		rec.take()
		if ok, err := b.Refresh(ctx, "on", "v", time.Minute); !ok || err != nil {
			t.Fatalf("Refresh = %v, %v, want true, nil after falling back", ok, err)
		}
		if cmds := rec.take(); len(cmds) < 2 || cmds[0] != "set" || cmds[1] != "evalsha" {
			t.Errorf("first Refresh sent %v, want SET IFEQ then the script", cmds)
		}
		if ok, err := b.Release(ctx, "on", "v"); !ok || err != nil {
			t.Fatalf("Release = %v, %v", ok, err)
		}
		if cmds := rec.take(); slices.Contains(cmds, "delex") {
			t.Errorf("Release after the rejection sent %v, want no DELEX", cmds)
		}
	})
}

func firstLine(info, prefix string) string {
	for _, l := range strings.Split(info, "\n") {
		if strings.HasPrefix(l, prefix) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

func TestTransportErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("closed client", func(t *testing.T) {
		srv := redistest.Start(t)
		c := redis.NewClient(&redis.Options{Addr: srv.Addr, DisableIdentity: true})
		c.Close()
		b := goredis.New(c, goredis.Options{Native: goredis.NativeOff})
		_, ok, err := b.Acquire(ctx, "k", "v", time.Second)
		checkOpError(t, "Acquire", ok, err, "acquire", redis.ErrClosed)
		ok, err = b.Release(ctx, "k", "v")
		checkOpError(t, "Release", ok, err, "release", redis.ErrClosed)
		ok, err = b.Refresh(ctx, "k", "v", time.Second)
		checkOpError(t, "Refresh", ok, err, "refresh", redis.ErrClosed)
		_, ok, err = b.PTTL(ctx, "k", "v")
		checkOpError(t, "PTTL", ok, err, "pttl", redis.ErrClosed)
	})
	t.Run("dead server", func(t *testing.T) {
		srv := redistest.Start(t)
		c, _ := newClient(t, srv.Addr)
		b := goredis.New(c, goredis.Options{Native: goredis.NativeOff})
		if _, ok, err := b.Acquire(ctx, "k", "v", time.Second); !ok || err != nil {
			t.Fatalf("Acquire before the kill = %v, %v", ok, err)
		}
		srv.Kill()
		ok, err := b.Release(ctx, "k", "v")
		var netErr *net.OpError
		if ok || !errors.As(err, &netErr) {
			t.Fatalf("Release on a dead server = %v, %v, want an error wrapping *net.OpError", ok, err)
		}
		checkOpError(t, "Release", ok, err, "release", nil)
	})
	t.Run("cancelled context", func(t *testing.T) {
		srv := redistest.Start(t)
		c, _ := newClient(t, srv.Addr)
		b := goredis.New(c, goredis.Options{Native: goredis.NativeOff})
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, ok, err := b.Acquire(cctx, "k", "v", time.Second)
		checkOpError(t, "Acquire", ok, err, "acquire", context.Canceled)
	})
}

func checkOpError(t *testing.T, call string, ok bool, err error, op string, cause error) {
	t.Helper()
	var oe *goredis.OpError
	if ok || !errors.As(err, &oe) {
		t.Fatalf("%s = %v, %v, want false and an *OpError", call, ok, err)
	}
	if oe.Op != op || oe.Key != "k" {
		t.Errorf("%s error Op, Key = %q, %q, want %q, %q", call, oe.Op, oe.Key, op, "k")
	}
	if cause != nil && !errors.Is(err, cause) {
		t.Errorf("%s error = %v, want it to wrap %v", call, err, cause)
	}
}

// TestLostReply makes replies get lost after the server ran the command and
// checks that a retrying holder never harms the next holder.
func TestLostReply(t *testing.T) {
	srv := redistest.Start(t)
	c, rec := newClient(t, srv.Addr)
	b := goredis.New(c, goredis.Options{Native: goredis.NativeOff})
	ctx := context.Background()
	warm(b) // a lost NOSCRIPT reply would hide the EVAL fallback

	t.Run("release reply lost, then someone else acquires", func(t *testing.T) {
		if _, ok, err := b.Acquire(ctx, "r", "A", 10*time.Second); !ok || err != nil {
			t.Fatalf("Acquire(A) = %v, %v", ok, err)
		}
		rec.lose.Store(1)
		if ok, err := b.Release(ctx, "r", "A"); ok || !errors.Is(err, errLostReply) {
			t.Fatalf("Release(A) with lost reply = %v, %v, want the loss as an error", ok, err)
		}
		// The release did happen, so B gets the lock.
		if _, ok, err := b.Acquire(ctx, "r", "B", 10*time.Second); !ok || err != nil {
			t.Fatalf("Acquire(B) = %v, %v, want true: A's release ran", ok, err)
		}
		// A retries its release: it must not delete B's lock.
		if ok, err := b.Release(ctx, "r", "A"); ok || err != nil {
			t.Fatalf("Release(A) retry = %v, %v, want false, nil", ok, err)
		}
		if v := c.Get(ctx, "r").Val(); v != "B" {
			t.Fatalf("GET r after A's retry = %q, want B", v)
		}
		b.Release(ctx, "r", "B")
	})
	t.Run("refresh reply lost, lock expires, someone else acquires", func(t *testing.T) {
		if _, ok, err := b.Acquire(ctx, "x", "A", 10*time.Second); !ok || err != nil {
			t.Fatalf("Acquire(A) = %v, %v", ok, err)
		}
		rec.lose.Store(1)
		if ok, err := b.Refresh(ctx, "x", "A", 10*time.Second); ok || !errors.Is(err, errLostReply) {
			t.Fatalf("Refresh(A) with lost reply = %v, %v, want the loss as an error", ok, err)
		}
		advance(t, c, 10*time.Second)
		if _, ok, err := b.Acquire(ctx, "x", "B", 10*time.Second); !ok || err != nil {
			t.Fatalf("Acquire(B) after expiry = %v, %v", ok, err)
		}
		if ok, err := b.Refresh(ctx, "x", "A", 10*time.Second); ok || err != nil {
			t.Fatalf("Refresh(A) retry = %v, %v, want false, nil", ok, err)
		}
		if ok, err := b.Release(ctx, "x", "A"); ok || err != nil {
			t.Fatalf("Release(A) = %v, %v, want false, nil", ok, err)
		}
		if _, ok, _ := b.PTTL(ctx, "x", "B"); !ok {
			t.Fatalf("B lost the lock to A's late calls")
		}
	})
	t.Run("acquire reply lost, cleanup by compare-and-delete", func(t *testing.T) {
		rec.lose.Store(1)
		if _, ok, err := b.Acquire(ctx, "y", "A", 10*time.Second); ok || !errors.Is(err, errLostReply) {
			t.Fatalf("Acquire(A) with lost reply = %v, %v, want the loss as an error", ok, err)
		}
		if _, ok, _ := b.Acquire(ctx, "y", "B", 10*time.Second); ok {
			t.Fatalf("Acquire(B) succeeded, want false: A's lost acquire was stored")
		}
		// What lockapi.Client does after a failed Acquire.
		if ok, err := b.Release(ctx, "y", "A"); !ok || err != nil {
			t.Fatalf("Release(A) cleanup = %v, %v, want true, nil", ok, err)
		}
		if _, ok, err := b.Acquire(ctx, "y", "B", 10*time.Second); !ok || err != nil {
			t.Fatalf("Acquire(B) after the cleanup = %v, %v, want true, nil", ok, err)
		}
	})
}

func TestConcurrentMutualExclusion(t *testing.T) {
	srv := redistest.Start(t)
	c, _ := newClient(t, srv.Addr)
	b := goredis.New(c, goredis.Options{})
	ctx := context.Background()
	var inside, entries atomic.Int32
	var lastFence atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; entries.Load() < 200; i++ {
				v := fmt.Sprintf("w%d-%d", w, i)
				fence, ok, err := b.Acquire(ctx, "mx", v, 10*time.Second)
				if err != nil {
					t.Errorf("Acquire: %v", err)
					return
				}
				if !ok {
					continue
				}
				if n := inside.Add(1); n != 1 {
					t.Errorf("%d holders inside the critical section", n)
				}
				if prev := lastFence.Swap(fence); fence <= prev {
					t.Errorf("fence %d after %d, want increasing", fence, prev)
				}
				entries.Add(1)
				inside.Add(-1)
				if ok, err := b.Release(ctx, "mx", v); !ok || err != nil {
					t.Errorf("Release = %v, %v", ok, err)
				}
			}
		}()
	}
	wg.Wait()
}
