package engine_test

// Differential testing against a real redis-server: the same operations run
// on the engine (real clock) and on Redis, and the replies are compared in
// Redis's terms (values, nil, integers, error kinds; TTLs within a
// tolerance). TTLs are either >= 5 s or clearly invalid / in the past, so no
// key expires in the middle of a comparison.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/internal/redistest"
)

// pttlTolerance bounds the difference between the two sides' PTTLs: they
// read different clocks a few hundred µs apart, and Redis counts in ms.
const pttlTolerance = 50 // ms

// reply is a Redis reply in normal form.
type reply struct {
	kind byte // 'n' nil, 's' string, 'i' integer, 'e' error class
	s    string
	i    int64
}

func (r reply) String() string {
	switch r.kind {
	case 'n':
		return "(nil)"
	case 's':
		return strconv.Quote(r.s)
	case 'i':
		return "(integer) " + strconv.FormatInt(r.i, 10)
	}
	return "(error) " + r.s
}

func nilReply() reply           { return reply{kind: 'n'} }
func strReply(s string) reply   { return reply{kind: 's', s: s} }
func intReply(i int64) reply    { return reply{kind: 'i', i: i} }
func okReply() reply            { return strReply("OK") }
func errReply(cls string) reply { return reply{kind: 'e', s: cls} }

// must returns v, panicking on an error: the engines these tests drive
// have no memory bound, so their writes never fail.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func boolReply(b bool) reply {
	if b {
		return intReply(1)
	}
	return intReply(0)
}

func boolErrReply(b bool, err error) reply {
	if err != nil {
		return errReply(errClass(err))
	}
	return boolReply(b)
}

func optReply(v string, ok bool) reply {
	if !ok {
		return nilReply()
	}
	return strReply(v)
}

// errClass maps an engine error to the Redis error it stands for.
func errClass(err error) string {
	switch {
	case errors.Is(err, engine.ErrSyntax):
		return "syntax error"
	case errors.Is(err, engine.ErrInvalidTTL):
		return "invalid expire time"
	case errors.Is(err, engine.ErrNotInteger):
		return "not an integer"
	case errors.Is(err, engine.ErrOverflow):
		return "overflow"
	}
	return "unexpected engine error: " + err.Error()
}

// redisErrClass maps a Redis error message to the same classes.
func redisErrClass(msg string) string {
	for _, c := range []string{"syntax error", "invalid expire time", "not an integer", "overflow"} {
		if strings.Contains(msg, c) {
			return c
		}
	}
	return msg
}

// diffStep is one operation in both forms.
type diffStep struct {
	name  string        // for messages
	redis []any         // the Redis command
	eng   func() reply  // the engine call, with its result in Redis terms
	pttl  bool          // compare integers >= 0 within pttlTolerance
	skip  func() string // optional: a reason to skip this step now
}

type differ struct {
	t     *testing.T
	ctx   context.Context
	rdb   *redis.Client
	e     *engine.Engine
	has84 bool
	n     int    // steps compared
	label string // the running case, for messages
}

func (d *differ) redisDo(args []any) reply {
	v, err := d.rdb.Do(d.ctx, args...).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return nilReply()
	case err != nil:
		var re redis.Error
		if !errors.As(err, &re) {
			d.t.Fatalf("%v: transport error: %v", args, err)
		}
		return errReply(redisErrClass(err.Error()))
	}
	switch v := v.(type) {
	case string:
		return strReply(v)
	case int64:
		return intReply(v)
	}
	d.t.Fatalf("%v: unexpected reply type %T (%v)", args, v, v)
	return reply{}
}

// run executes s on both sides and fails on a difference.
func (d *differ) run(s diffStep) {
	d.t.Helper()
	if msg := d.compare(s); msg != "" {
		d.t.Fatal(msg)
	}
}

// compare executes s on both sides and describes the difference, if any.
func (d *differ) compare(s diffStep) string {
	if s.skip != nil && s.skip() != "" {
		return ""
	}
	got := s.eng()
	want := d.redisDo(s.redis)
	d.n++
	if s.pttl && got.kind == 'i' && want.kind == 'i' && got.i >= 0 && want.i >= 0 {
		if diff := got.i - want.i; diff > pttlTolerance || diff < -pttlTolerance {
			return fmt.Sprintf("%s step %d: %s: engine PTTL = %d ms, redis %v: %d ms (tolerance %d ms)", d.label, d.n, s.name, got.i, s.redis, want.i, pttlTolerance)
		}
		return ""
	}
	if got != want {
		return fmt.Sprintf("%s step %d: %s: engine = %v, redis %v = %v", d.label, d.n, s.name, got, s.redis, want)
	}
	return ""
}

// ttlArg is one TTL in both units: ms for Redis, a Duration for the engine.
type ttlArg struct {
	ms int64
	d  time.Duration
}

func ms(n int64) ttlArg { return ttlArg{ms: n, d: time.Duration(n) * time.Millisecond} }

var (
	diffTTLs = []ttlArg{
		ms(5000), ms(10000), ms(30000), ms(60000), ms(3600000), ms(20000),
		ms(0), ms(-5),
		{ms: math.MaxInt64, d: math.MaxInt64}, // overflows now+ttl on both sides
	}
	diffIncrs = []int64{1, -1, 7, 0, math.MaxInt64, math.MinInt64}
)

// Step constructors: each pairs a Redis command with the engine call.

func (d *differ) get(k string) diffStep {
	return diffStep{name: fmt.Sprintf("Get(%q)", k), redis: []any{"GET", k},
		eng: func() reply { return optReply(d.e.Get(k)) }}
}

func (d *differ) set(k, v string) diffStep {
	return diffStep{name: fmt.Sprintf("Set(%q, %q)", k, v), redis: []any{"SET", k, v},
		eng: func() reply { d.e.Set(k, v); return okReply() }}
}

func (d *differ) setPX(k, v string, ttl ttlArg) diffStep {
	return diffStep{name: fmt.Sprintf("SetPX(%q, %q, %v)", k, v, ttl.d), redis: []any{"SET", k, v, "PX", ttl.ms},
		eng: func() reply {
			if err := d.e.SetPX(k, v, ttl.d); err != nil {
				return errReply(errClass(err))
			}
			return okReply()
		}}
}

func (d *differ) setNX(k, v string) diffStep {
	return diffStep{name: fmt.Sprintf("SetNX(%q, %q)", k, v), redis: []any{"SETNX", k, v},
		eng: func() reply { return boolReply(must(d.e.SetNX(k, v))) }}
}

func (d *differ) setNXPX(k, v string, ttl ttlArg) diffStep {
	return diffStep{name: fmt.Sprintf("SetNXPX(%q, %q, %v)", k, v, ttl.d), redis: []any{"SET", k, v, "NX", "PX", ttl.ms},
		eng: func() reply {
			ok, err := d.e.SetNXPX(k, v, ttl.d)
			switch {
			case err != nil:
				return errReply(errClass(err))
			case ok:
				return okReply()
			}
			return nilReply()
		}}
}

// setExpiry is SetWith's expiry argument in both forms.
type setExpiry uint8

const (
	expNone setExpiry = iota
	expPX
	expPXATPast
	expPXATFuture
	expKeepTTL
	expPXKeepTTL // syntax error
	expPXPXAT    // syntax error
	numSetExpiry
)

func (d *differ) setWith(k, v string, cond engine.Condition, match string, get bool, exp setExpiry, ttl ttlArg) diffStep {
	args := []any{"SET", k, v}
	switch cond {
	case engine.IfAbsent:
		args = append(args, "NX")
	case engine.IfPresent:
		args = append(args, "XX")
	case engine.IfEqual:
		args = append(args, "IFEQ", match)
	case engine.IfNotEqual:
		args = append(args, "IFNE", match)
	}
	if get {
		args = append(args, "GET")
	}
	if ttl.ms == 0 && (exp == expPX || exp == expPXKeepTTL || exp == expPXPXAT) {
		// SetArgs.TTL 0 means "no PX" and cannot say PX 0; -5 ms is the
		// same invalid expire time on both sides.
		ttl = ms(-5)
	}
	sa := engine.SetArgs{Cond: cond, Match: match}
	at := func(off time.Duration) time.Time {
		// Whole ms, so both sides get the same deadline.
		return time.UnixMilli(time.Now().Add(off).UnixMilli())
	}
	switch exp {
	case expPX:
		args, sa.TTL = append(args, "PX", ttl.ms), ttl.d
	case expPXATPast:
		sa.At = at(-time.Hour)
		args = append(args, "PXAT", sa.At.UnixMilli())
	case expPXATFuture:
		sa.At = at(time.Hour)
		args = append(args, "PXAT", sa.At.UnixMilli())
	case expKeepTTL:
		args, sa.KeepTTL = append(args, "KEEPTTL"), true
	case expPXKeepTTL:
		args, sa.TTL, sa.KeepTTL = append(args, "PX", ttl.ms, "KEEPTTL"), ttl.d, true
	case expPXPXAT:
		sa.TTL, sa.At = ttl.d, at(time.Hour)
		args = append(args, "PX", ttl.ms, "PXAT", sa.At.UnixMilli())
	}
	return diffStep{name: fmt.Sprintf("SetWith(%q, %q, %+v) get=%v", k, v, sa, get), redis: args,
		eng: func() reply {
			res, err := d.e.SetWith(k, v, sa)
			switch {
			case err != nil:
				return errReply(errClass(err))
			case get:
				return optReply(res.Old, res.HadOld)
			case res.Written:
				return okReply()
			}
			return nilReply()
		}}
}

func (d *differ) getSet(k, v string) diffStep {
	return diffStep{name: fmt.Sprintf("GetSet(%q, %q)", k, v), redis: []any{"GETSET", k, v},
		eng: func() reply { old, ok, err := d.e.GetSet(k, v); return optReply(old, must(ok, err)) }}
}

func (d *differ) getDel(k string) diffStep {
	return diffStep{name: fmt.Sprintf("GetDel(%q)", k), redis: []any{"GETDEL", k},
		eng: func() reply { return optReply(d.e.GetDel(k)) }}
}

func (d *differ) del(keys ...string) diffStep {
	args := []any{"DEL"}
	for _, k := range keys {
		args = append(args, k)
	}
	return diffStep{name: fmt.Sprintf("Del(%q)", keys), redis: args,
		eng: func() reply { return intReply(int64(d.e.Del(keys...))) }}
}

func (d *differ) exists(k string) diffStep {
	return diffStep{name: fmt.Sprintf("Exists(%q)", k), redis: []any{"EXISTS", k},
		eng: func() reply { return boolReply(d.e.Exists(k)) }}
}

func (d *differ) pexpire(k string, ttl ttlArg) diffStep {
	return diffStep{name: fmt.Sprintf("PExpire(%q, %v)", k, ttl.d), redis: []any{"PEXPIRE", k, ttl.ms},
		eng: func() reply { return boolErrReply(d.e.PExpire(k, ttl.d)) }}
}

var expireCondNames = map[engine.ExpireCond]string{engine.ExpireNX: "NX", engine.ExpireXX: "XX", engine.ExpireGT: "GT", engine.ExpireLT: "LT"}

func (d *differ) pexpireCond(k string, ttl ttlArg, c engine.ExpireCond) diffStep {
	args := []any{"PEXPIRE", k, ttl.ms}
	if name, ok := expireCondNames[c]; ok {
		args = append(args, name)
	}
	s := diffStep{name: fmt.Sprintf("PExpireCond(%q, %v, %d)", k, ttl.d, c), redis: args,
		eng: func() reply {
			ok, err := d.e.PExpireCond(k, ttl.d, c)
			if err != nil {
				return errReply(errClass(err))
			}
			return boolReply(ok)
		}}
	if c == engine.ExpireGT || c == engine.ExpireLT {
		// GT/LT compare the new deadline with the current one; when they
		// are within a few ms the two sides' clocks (ns vs ms, read at
		// slightly different instants) may legitimately disagree.
		s.skip = func() string {
			cur, ok := d.e.PTTL(k)
			if ok && cur >= 0 && (cur-ttl.d).Abs() < 100*time.Millisecond {
				return "deadlines too close to compare across clocks"
			}
			return ""
		}
	}
	return s
}

func (d *differ) pexpireAt(k string, off time.Duration) diffStep {
	at := time.UnixMilli(time.Now().Add(off).UnixMilli())
	return diffStep{name: fmt.Sprintf("PExpireAt(%q, now%s)", k, fmtOffset(off)), redis: []any{"PEXPIREAT", k, at.UnixMilli()},
		eng: func() reply { return boolErrReply(d.e.PExpireAt(k, at)) }}
}

func (d *differ) pttl(k string) diffStep {
	return diffStep{name: fmt.Sprintf("PTTL(%q)", k), redis: []any{"PTTL", k}, pttl: true,
		eng: func() reply {
			ttl, ok := d.e.PTTL(k)
			switch {
			case !ok:
				return intReply(-2)
			case ttl == engine.NoExpiry:
				return intReply(-1)
			}
			return intReply(ttl.Milliseconds())
		}}
}

func (d *differ) persist(k string) diffStep {
	return diffStep{name: fmt.Sprintf("Persist(%q)", k), redis: []any{"PERSIST", k},
		eng: func() reply { return boolReply(d.e.Persist(k)) }}
}

func (d *differ) incrBy(k string, n int64) diffStep {
	return diffStep{name: fmt.Sprintf("IncrBy(%q, %d)", k, n), redis: []any{"INCRBY", k, n},
		eng: func() reply {
			v, err := d.e.IncrBy(k, n)
			if err != nil {
				return errReply(errClass(err))
			}
			return intReply(v)
		}}
}

// Compare-and-* have no Redis 7 command: a Lua script (atomic in Redis) is
// the reference, or DELEX IFEQ on Redis >= 8.4.
const (
	luaCAD = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`
	luaCAS = `if redis.call('get', KEYS[1]) == ARGV[1] then redis.call('set', KEYS[1], ARGV[2], 'KEEPTTL') return 1 else return 0 end`
	luaCAP = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`
)

func (d *differ) compareAndDelete(k, v string) diffStep {
	args := []any{"EVAL", luaCAD, 1, k, v}
	if d.has84 {
		args = []any{"DELEX", k, "IFEQ", v}
	}
	return diffStep{name: fmt.Sprintf("CompareAndDelete(%q, %q)", k, v), redis: args,
		eng: func() reply { return boolReply(d.e.CompareAndDelete(k, v)) }}
}

func (d *differ) compareAndSwap(k, old, v string) diffStep {
	return diffStep{name: fmt.Sprintf("CompareAndSwap(%q, %q, %q)", k, old, v), redis: []any{"EVAL", luaCAS, 1, k, old, v},
		eng: func() reply { return boolReply(must(d.e.CompareAndSwap(k, old, v))) }}
}

// compareAndPExpire takes ttl > 0 only: the engine rejects ttl <= 0 where
// the script's PEXPIRE would delete (Redis has no native command to match).
func (d *differ) compareAndPExpire(k, v string, ttl ttlArg) diffStep {
	return diffStep{name: fmt.Sprintf("CompareAndPExpire(%q, %q, %v)", k, v, ttl.d), redis: []any{"EVAL", luaCAP, 1, k, v, ttl.ms},
		eng: func() reply {
			ok, err := d.e.CompareAndPExpire(k, v, ttl.d)
			if err != nil {
				return errReply(errClass(err))
			}
			return boolReply(ok)
		}}
}

// randomStep draws one operation over the model's key and value alphabets.
func (d *differ) randomStep(rng *rand.Rand) diffStep {
	key := func() string { return alphabet[rng.IntN(len(alphabet))] }
	val := func() string { return values[rng.IntN(len(values))] }
	ttl := func() ttlArg { return diffTTLs[rng.IntN(len(diffTTLs))] }
	validTTL := func() ttlArg { return diffTTLs[rng.IntN(6)] }
	// A value for compare-and-*: usually the key's current one.
	cur := func(k string) string {
		if v, ok := d.e.Get(k); ok && rng.IntN(4) != 0 {
			return v
		}
		return val()
	}
	switch rng.IntN(21) {
	case 0, 1:
		return d.get(key())
	case 2:
		return d.set(key(), val())
	case 3:
		return d.setPX(key(), val(), ttl())
	case 4:
		return d.setNX(key(), val())
	case 5:
		return d.setNXPX(key(), val(), ttl())
	case 6, 7:
		conds := []engine.Condition{engine.Always, engine.IfAbsent, engine.IfPresent}
		if d.has84 {
			conds = append(conds, engine.IfEqual, engine.IfNotEqual)
		}
		k := key()
		return d.setWith(k, val(), conds[rng.IntN(len(conds))], cur(k), rng.IntN(2) == 0, setExpiry(rng.IntN(int(numSetExpiry))), ttl())
	case 8:
		return d.getSet(key(), val())
	case 9:
		return d.getDel(key())
	case 10:
		keys := make([]string, 1+rng.IntN(3))
		for i := range keys {
			keys[i] = key()
		}
		return d.del(keys...)
	case 11:
		return d.exists(key())
	case 12:
		t := ttl()
		if t.ms == math.MaxInt64 {
			t = validTTL() // PExpire has no error result; overflow goes through PExpireCond
		}
		return d.pexpire(key(), t)
	case 13:
		return d.pexpireCond(key(), ttl(), engine.ExpireCond(rng.IntN(5)))
	case 14:
		return d.pexpireAt(key(), []time.Duration{-time.Hour, time.Hour, -time.Second}[rng.IntN(3)])
	case 15, 16:
		return d.pttl(key())
	case 17:
		return d.persist(key())
	case 18:
		return d.incrBy(key(), diffIncrs[rng.IntN(len(diffIncrs))])
	case 19:
		k := key()
		if rng.IntN(2) == 0 {
			return d.compareAndSwap(k, cur(k), val())
		}
		return d.compareAndPExpire(k, cur(k), validTTL())
	default:
		k := key()
		return d.compareAndDelete(k, cur(k))
	}
}

// sweep compares every key's value and TTL.
func (d *differ) sweep() {
	d.t.Helper()
	for _, k := range alphabet {
		d.run(d.get(k))
		d.run(d.pttl(k))
	}
}

// reset empties both sides.
func (d *differ) reset() {
	d.t.Helper()
	if err := d.rdb.FlushAll(d.ctx).Err(); err != nil {
		d.t.Fatalf("FLUSHALL: %v", err)
	}
	d.e.Del(alphabet...)
}

func newDiffer(t *testing.T) *differ {
	t.Helper()
	srv := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{
		Addr:                     srv.Addr,
		Protocol:                 2,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	t.Cleanup(func() { _ = rdb.Close() })
	e := engine.New(engine.Options{})
	t.Cleanup(func() { _ = e.Close() })
	ctx := context.Background()
	info, err := rdb.Info(ctx, "server").Result()
	if err != nil {
		t.Fatalf("INFO server: %v", err)
	}
	version := ""
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			version = v
		}
	}
	var major, minor int
	if _, err := fmt.Sscanf(version, "%d.%d", &major, &minor); err != nil {
		t.Fatalf("cannot parse redis_version %q: %v", version, err)
	}
	has84 := major > 8 || (major == 8 && minor >= 4)
	t.Logf("redis-server %s: IFEQ/IFNE/DELEX %v", version, map[bool]string{true: "compared", false: "skipped (need 8.4)"}[has84])
	return &differ{t: t, ctx: ctx, rdb: rdb, e: e, has84: has84}
}

// TestRedisDiffRandom runs seeded random operation sequences on both sides.
// NXKV_DIFF_SEED replays a logged seed.
func TestRedisDiffRandom(t *testing.T) {
	d := newDiffer(t)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("NXKV_DIFF_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("NXKV_DIFF_SEED=%q: %v", s, err)
		}
	}
	t.Logf("seed %d (replay with NXKV_DIFF_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	const rounds, steps = 10, 300
	for r := 0; r < rounds; r++ {
		d.label = fmt.Sprintf("seed %d round %d", seed, r)
		d.reset()
		for i := 0; i < steps; i++ {
			d.run(d.randomStep(rng))
		}
		d.sweep()
	}
	t.Logf("%d steps compared", d.n)
}

// TestRedisDiffEdgeCases runs hand-written sequences on both sides.
func TestRedisDiffEdgeCases(t *testing.T) {
	d := newDiffer(t)
	none := ttlArg{}
	cases := []struct {
		name  string
		steps func() []diffStep
	}{
		{"SETNX on an expired key", func() []diffStep {
			return []diffStep{
				d.setWith("a", "old", engine.Always, "", false, expPXATPast, none),
				d.get("a"), d.exists("a"), d.pttl("a"),
				d.setNX("a", "new"), d.get("a"), d.pttl("a"),
				d.setWith("b", "old", engine.Always, "", false, expPXATPast, none),
				d.setNXPX("b", "new", ms(10000)), d.get("b"), d.pttl("b"),
			}
		}},
		{"GETSET clears the TTL", func() []diffStep {
			return []diffStep{d.setPX("a", "v", ms(60000)), d.pttl("a"), d.getSet("a", "w"), d.pttl("a"), d.get("a")}
		}},
		{"EXPIRE GT and LT on a key without TTL", func() []diffStep {
			return []diffStep{
				d.set("a", "v"),
				d.pexpireCond("a", ms(10000), engine.ExpireGT), d.pttl("a"),
				d.pexpireCond("a", ms(10000), engine.ExpireXX), d.pttl("a"),
				d.pexpireCond("a", ms(10000), engine.ExpireLT), d.pttl("a"),
				d.pexpireCond("a", ms(20000), engine.ExpireNX), d.pexpireCond("a", ms(5000), engine.ExpireGT),
				d.pexpireCond("a", ms(60000), engine.ExpireGT), d.pttl("a"),
				d.pexpireCond("a", ms(0), engine.ExpireGT), d.pexpireCond("a", ms(-1), engine.ExpireLT), d.exists("a"),
				d.pexpireCond("missing", ms(5000), engine.ExpireAlways),
				d.pexpireCond("missing", ttlArg{ms: math.MaxInt64, d: math.MaxInt64}, engine.ExpireAlways),
			}
		}},
		{"PTTL states", func() []diffStep {
			return []diffStep{
				d.pttl("a"), d.set("a", "v"), d.pttl("a"), d.pexpire("a", ms(30000)), d.pttl("a"),
				d.persist("a"), d.pttl("a"), d.persist("a"), d.pexpire("a", ms(0)), d.pttl("a"), d.exists("a"),
				d.set("b", "v"), d.pexpireAt("b", -time.Second), d.pttl("b"), d.get("b"),
			}
		}},
		{"SET ... GET", func() []diffStep {
			return []diffStep{
				d.setWith("a", "v1", engine.Always, "", true, expNone, none),
				d.setWith("a", "v2", engine.IfAbsent, "", true, expPX, ms(10000)), d.get("a"), d.pttl("a"),
				d.setWith("a", "v3", engine.IfPresent, "", true, expPX, ms(10000)), d.get("a"), d.pttl("a"),
				d.setWith("a", "v4", engine.Always, "", true, expKeepTTL, none), d.pttl("a"),
				d.setWith("a", "v5", engine.Always, "", true, expNone, none), d.pttl("a"),
				d.setWith("b", "v", engine.IfPresent, "", true, expNone, none), d.exists("b"),
			}
		}},
		{"invalid expire times and syntax errors change nothing", func() []diffStep {
			return []diffStep{
				d.set("a", "v"),
				d.setPX("a", "x", ms(0)), d.setPX("a", "x", ms(-5)), d.setNXPX("a", "x", ms(0)),
				d.setNXPX("missing", "x", ms(0)), d.exists("missing"),
				d.setPX("a", "x", ttlArg{ms: math.MaxInt64, d: math.MaxInt64}),
				d.setWith("a", "x", engine.Always, "", false, expPXKeepTTL, ms(5000)),
				d.setWith("a", "x", engine.IfAbsent, "", false, expPXPXAT, ms(5000)),
				d.setWith("a", "x", engine.IfAbsent, "", true, expPX, ms(-5)),
				d.get("a"), d.pttl("a"),
			}
		}},
		{"INCRBY", func() []diffStep {
			return []diffStep{
				d.incrBy("n", 5), d.incrBy("n", -7), d.get("n"),
				d.set("s", "abc"), d.incrBy("s", 1), d.get("s"),
				d.set("z", "01"), d.incrBy("z", 1), d.set("p", "+5"), d.incrBy("p", 1),
				d.set("m", "-0"), d.incrBy("m", 1), d.set("w", " 2"), d.incrBy("w", 1),
				d.set("e", ""), d.incrBy("e", 1),
				d.set("big", "9223372036854775807"), d.incrBy("big", 1), d.incrBy("big", -1), d.get("big"),
				d.set("small", "-9223372036854775808"), d.incrBy("small", -1), d.incrBy("small", math.MaxInt64), d.get("small"),
				d.setPX("t", "10", ms(60000)), d.incrBy("t", 5), d.pttl("t"), d.get("t"),
			}
		}},
		{"lock pattern", func() []diffStep {
			return []diffStep{
				d.setNXPX("lock", "tok1", ms(30000)), d.setNXPX("lock", "tok2", ms(30000)),
				d.compareAndPExpire("lock", "tok2", ms(60000)), d.compareAndPExpire("lock", "tok1", ms(60000)), d.pttl("lock"),
				d.compareAndDelete("lock", "tok2"), d.get("lock"), d.compareAndDelete("lock", "tok1"), d.exists("lock"),
				d.setNXPX("lock", "tok2", ms(30000)), d.compareAndSwap("lock", "tok2", "tok3"), d.pttl("lock"), d.get("lock"),
			}
		}},
		{"DEL counts existing keys once", func() []diffStep {
			return []diffStep{d.set("a", "1"), d.set("b", "2"), d.del("a", "a", "b", "c"), d.del("a"), d.exists("b")}
		}},
	}
	for _, c := range cases {
		d.reset()
		d.e.Del("missing", "n", "s", "z", "p", "m", "w", "e", "big", "small", "t", "lock")
		d.label = strconv.Quote(c.name)
		for _, s := range c.steps() {
			d.run(s)
		}
	}
}

// TestRedisDiffCatchesPlantedBugs shows the differential check can fail:
// engine-side steps with planted Redis deviations must be reported.
func TestRedisDiffCatchesPlantedBugs(t *testing.T) {
	d := newDiffer(t)
	planted := []struct {
		name  string
		steps []diffStep
	}{
		{"GETSET that keeps the TTL", []diffStep{
			d.setPX("a", "v", ms(60000)),
			{name: "planted GetSet", redis: []any{"GETSET", "a", "w"}, eng: func() reply {
				res, _ := d.e.SetWith("a", "w", engine.SetArgs{KeepTTL: true})
				return optReply(res.Old, res.HadOld)
			}},
			d.pttl("a"),
		}},
		{"INCRBY that accepts a leading '+'", []diffStep{
			d.set("p", "+5"),
			{name: "planted IncrBy", redis: []any{"INCRBY", "p", 1}, eng: func() reply {
				v, _ := d.e.Get("p")
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return errReply("not an integer")
				}
				d.e.Set("p", strconv.FormatInt(n+1, 10))
				return intReply(n + 1)
			}},
		}},
		{"PTTL off by a second", []diffStep{
			d.setPX("b", "v", ms(30000)),
			{name: "planted PTTL", redis: []any{"PTTL", "b"}, pttl: true, eng: func() reply {
				ttl, _ := d.e.PTTL("b")
				return intReply((ttl + time.Second).Milliseconds())
			}},
		}},
	}
	for _, p := range planted {
		d.reset()
		d.e.Del("p")
		d.label = strconv.Quote(p.name)
		caught := ""
		for _, s := range p.steps {
			if caught = d.compare(s); caught != "" {
				break
			}
		}
		if caught == "" {
			t.Errorf("planted %s: no difference reported, want one", p.name)
			continue
		}
		t.Logf("caught: %s", caught)
	}
}
