package resp_test

// maxmemory compared with redis-server, with the same bound and policy on
// both. nxkv counts memory otherwise than Redis (its keys as the engine
// counts them and each database's overhead, where Redis counts its
// allocator's bytes, client buffers included), so these tests choose
// bounds and workloads whose outcome does not depend on the byte counts:
//
//   - maxmemory 1 is exceeded before any key is written, on both (Redis
//     holds about 1 MB at start, nxkv its databases' overhead): every
//     command then evicts all the policy may evict, and refuses a command
//     that may add memory with the OOM error; the random command streams
//     of redis_diff_test.go (strings, keys, TTLs, databases, MULTI/EXEC,
//     Lua) run under each policy and their replies are compared byte for
//     byte, so every command's deny-oom flag, the MULTI and Lua rules and
//     what eviction leaves (no keys, or only those without a TTL under the
//     volatile policies) must agree;
//   - scripted sessions over two connections (one sets maxmemory between
//     the other's MULTI and EXEC) compare the OOM, EXECABORT and script
//     errors byte for byte, and the error and command statistics;
//   - under volatile-ttl, eight keys of 4 MiB with TTLs and writes of 4 MiB
//     made by SETRANGE (whose request is small, so Redis's query buffer
//     does not count) past a bound of 10.5 times that size: whichever
//     server's overhead (under half a value), the writes evict three keys
//     and the next command (Redis evicts before every command) a fourth,
//     and they must be the four nearest deadlines;
//   - CONFIG SET/GET of the three parameters with Redis's units and
//     errors, and INFO's memory and eviction fields, under every policy.

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/internal/redistest"
	"github.com/nxkv/nxkv/resp"
)

// policies are the eight maxmemory-policy values.
var policies = []string{"noeviction", "allkeys-lru", "allkeys-lfu", "allkeys-random",
	"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"}

// configBoth runs CONFIG SET name value on both servers.
func configBoth(t *testing.T, name, value string, addrs ...string) {
	t.Helper()
	for _, addr := range addrs {
		if r, err := dialRaw(t, addr).do([]string{"config", "set", name, value}); err != nil || string(r) != "+OK\r\n" {
			t.Fatalf("config set %s %s on %s: %q %v", name, value, addr, r, err)
		}
	}
}

// TestMaxmemoryStreamsMatchRedis runs random command streams on both
// servers under each policy with maxmemory 1: half a stream fills the
// keyspace without a bound, then the bound is set and the rest compared.
func TestMaxmemoryStreamsMatchRedis(t *testing.T) {
	redisAddr, nxkvAddr, shas := startPair(t, resp.Options{})
	seed, streams, _ := diffStreams(4, 1)
	for pi, policy := range policies {
		for _, i := range streams {
			g := &gen{r: rand.New(rand.NewPCG(seed, uint64(100*pi+i))), now: time.Now(), shas: shas}
			fill, steps := g.stream(80), g.stream(150)
			resp3 := i%2 == 1
			if d := diff(t, redisAddr, nxkvAddr, fill, resp3); d != "" {
				t.Fatalf("%s, stream %d (seed %d) before the bound: %s", policy, i, seed, d)
			}
			configBoth(t, "maxmemory-policy", policy, redisAddr, nxkvAddr)
			configBoth(t, "maxmemory", "1", redisAddr, nxkvAddr)
			// Commands that change the configuration would lift the bound.
			steps = slicesDeleteFunc(steps, func(st step) bool { return st.args[0] == "config" })
			if d := diff(t, redisAddr, nxkvAddr, steps, resp3); d != "" {
				t.Fatalf("%s, stream %d (seed %d; rerun with NXKV_DIFF_SEED=%d), maxmemory 1: %s", policy, i, seed, seed, d)
			}
			checkInfoBoth(t, policy, "1", redisAddr, nxkvAddr)
			configBoth(t, "maxmemory", "0", redisAddr, nxkvAddr)
			flushBoth(t, redisAddr, nxkvAddr)
		}
	}
}

// slicesDeleteFunc is slices.DeleteFunc on a copy.
func slicesDeleteFunc(steps []step, del func(step) bool) []step {
	var out []step
	for _, st := range steps {
		if !del(st) {
			out = append(out, st)
		}
	}
	return out
}

// info returns the fields of INFO section on addr.
func info(t *testing.T, addr, section string) map[string]string {
	t.Helper()
	r, err := dialRaw(t, addr).do([]string{"info", section})
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]string{}
	for _, l := range tokens(r)[1:] {
		if k, v, ok := strings.Cut(l, ":"); ok {
			fields[k] = v
		}
	}
	return fields
}

// checkInfoBoth checks, on each server, that INFO reports the bound and
// policy CONFIG GET does, used memory with its human form, and a count of
// evicted keys, consistent with each other.
func checkInfoBoth(t *testing.T, policy, max string, addrs ...string) {
	t.Helper()
	for _, addr := range addrs {
		mem, stats := info(t, addr, "memory"), info(t, addr, "stats")
		used, err := strconv.ParseInt(mem["used_memory"], 10, 64)
		if err != nil || used <= 0 {
			t.Fatalf("%s: used_memory %q", addr, mem["used_memory"])
		}
		maxN, _ := strconv.ParseUint(max, 10, 64)
		evicted, err := strconv.ParseInt(stats["evicted_keys"], 10, 64)
		switch {
		case mem["used_memory_human"] != resp.HumanBytes(uint64(used)):
			t.Fatalf("%s: used_memory %d, used_memory_human %q", addr, used, mem["used_memory_human"])
		case mem["maxmemory"] != max || mem["maxmemory_human"] != resp.HumanBytes(maxN):
			t.Fatalf("%s: maxmemory %q (%q), want %s", addr, mem["maxmemory"], mem["maxmemory_human"], max)
		case mem["maxmemory_policy"] != policy:
			t.Fatalf("%s: maxmemory_policy %q, want %s", addr, mem["maxmemory_policy"], policy)
		case err != nil || evicted < 0 || (policy == "noeviction") != (evicted == 0):
			t.Fatalf("%s: evicted_keys %q under %s", addr, stats["evicted_keys"], policy)
		}
	}
}

// session is a scripted exchange on two connections: a line starting with
// "2 " runs on the second.
type session []string

// run runs s on both servers (RESP2, or RESP3 on the first connection)
// and returns the first difference.
func (s session) run(t *testing.T, resp3 bool, addrs ...string) string {
	t.Helper()
	var conns [2][2]*rawConn
	for i, addr := range addrs {
		conns[i] = [2]*rawConn{dialRaw(t, addr), dialRaw(t, addr)}
		if resp3 {
			if _, err := conns[i][0].do([]string{"hello", "3"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for n, line := range s {
		c := 0
		if rest, ok := strings.CutPrefix(line, "2 "); ok {
			c, line = 1, rest
		}
		args := splitLine(t, line)
		var got [2][]byte
		for i := range addrs {
			r, err := conns[i][c].do(args)
			if err != nil {
				return fmt.Sprintf("line %d %q on %s: %v", n, line, addrs[i], err)
			}
			got[i] = r
		}
		if string(got[0]) != string(got[1]) {
			return fmt.Sprintf("line %d %q\nredis-server: %q\nnxkv-server:  %q", n, line, got[0], got[1])
		}
	}
	return ""
}

// splitLine splits a session line into arguments: words, or double-quoted
// strings with \n escapes.
func splitLine(t *testing.T, line string) []string {
	var args []string
	for line = strings.TrimSpace(line); line != ""; line = strings.TrimSpace(line) {
		if line[0] == '"' {
			end := strings.IndexByte(line[1:], '"')
			if end < 0 {
				t.Fatalf("unbalanced quotes in %q", line)
			}
			args = append(args, strings.ReplaceAll(line[1:end+1], `\n`, "\n"))
			line = line[end+2:]
			continue
		}
		w, rest, _ := strings.Cut(line, " ")
		args, line = append(args, w), rest
	}
	return args
}

// oomSessions exercise the OOM rules: reads and deletes under a tight
// bound, MULTI (a command queued while out of memory dooms the
// transaction; EXEC is refused when what it queued may add memory and the
// bound was passed since; DISCARD and an EXEC of reads are not), Lua (a
// write refused until the script has written; pcall; the shebang flags;
// EVALSHA of a flagged script), CONFIG inside MULTI, and the statistics of
// refused calls.
var oomSessions = map[string]session{
	"commands": {
		"flushall", "set x 1", "set y 2", "expire y 1000", "config set maxmemory 1",
		"set z 1", "get x", "mget x y z", "ttl y", "exists x y", "strlen x",
		"append x 1", "incr x", "setnx z 1", "getset x 2", "mset a 1 b 2",
		"expire x 100", "persist y", "getdel y", "del x", "set x 1", "rename nosuch z",
		"ping", "echo hi", "dbsize", "select 1", "set x 1", "get x", "select 0",
		"config set maxmemory 0", "set x 1", "get x",
	},
	"multi": {
		"flushall", "set x 1", "config set maxmemory 1",
		"multi", "get x", "set z 1", "exec",
		"multi", "exec", "multi", "discard", "multi", "ping", "discard",
		"config set maxmemory 0",
		"multi", "set z 1", "get x", "2 config set maxmemory 1", "exec",
		"2 config set maxmemory 0",
		"multi", "get x", "ping", "2 config set maxmemory 1", "exec",
		"2 config set maxmemory 0",
		"multi", "get x", "2 config set maxmemory 1", "set z 1", "2 config set maxmemory 0", "exec",
		"multi", `eval "#!lua\nreturn 1" 0`, "2 config set maxmemory 1", "exec",
		"2 config set maxmemory 0",
		`multi`, `eval "#!lua flags=no-writes\nreturn 1" 0`, "2 config set maxmemory 1", "exec",
		"2 config set maxmemory 0",
		"multi", `eval "return redis.call('set','y','z')" 1 y`, "2 config set maxmemory 1", "exec",
		"2 config set maxmemory 0",
		"multi", "set foo bar", "config set maxmemory bla", "exec",
		"multi", "set foo bar", "config set maxmemory 1", "set foo baz", "exec", "set foo 1",
		"config set maxmemory 0", "get foo",
	},
	"lua": {
		"flushall", "set x 1", "script load \"#!lua\nreturn 1\"", "config set maxmemory 1",
		`eval "return redis.call('set','y','z')" 1 y`,
		`eval "return redis.pcall('set','y','z')" 1 y`,
		`eval "local t = redis.pcall('set','y','z') return t['err']" 1 y`,
		`eval "#!lua\nreturn 1" 0`,
		`eval "#!lua flags=\nreturn 1" 0`,
		`eval "#!lua flags=no-writes\nreturn redis.call('get','x')" 1 x`,
		`eval_ro "#!lua flags=no-writes\nreturn redis.call('get','x')" 1 x`,
		`eval "#!lua flags=allow-oom\nreturn redis.call('set','y','z')" 1 y`,
		`eval "redis.call('del','y'); return redis.call('set','y','z')" 1 y`,
		`eval "redis.call('incr','y'); return redis.call('set','y','z')" 1 y`,
		`eval "redis.call('get','y'); return redis.call('set','y','z')" 1 y`,
		`eval "return redis.call('get','y')" 1 y`,
		`eval_ro "return redis.call('set','y','z')" 1 y`,
		`eval_ro "return redis.call('get','y')" 1 y`,
		"evalsha cb70127618f0b0be70c53cf6bfcfa54a29d9b0c0 0",
		"evalsha_ro cb70127618f0b0be70c53cf6bfcfa54a29d9b0c0 0",
		`eval "#!lua bad\nreturn 1" 0`,
		"config set maxmemory 0",
		`eval "#!lua\nreturn 1" 0`,
	},
	// The errors of refused calls: a script's own error replied to the
	// client counts once. (An error a script swallows with pcall counts
	// in Redis, not in nxkv, refused for memory or not; not compared.)
	"stats": {
		"flushall", "config resetstat", "config set maxmemory 1",
		`eval "return redis.call('set','x','y')" 1 x`,
		"info errorstats",
		"config resetstat",
		`eval "return redis.pcall('set','x','y')" 1 x`,
		"set x y", "multi", "set x y", "exec",
		"info errorstats",
		"config set maxmemory 0",
	},
	"config": {
		"config set maxmemory bla", "config set MAXMEMORY bla", "config set maxmemory -1",
		"config set maxmemory 1.5mb", `config set maxmemory " 1"`, "config set maxmemory +1",
		"config set maxmemory 1gb", "config get maxmemory", "config set maxmemory 1g", "config get maxmemory",
		"config set maxmemory 100KB", "config get maxmemory", "config set maxmemory 2K", "config get maxmemory",
		"config set maxmemory 10mB", "config get maxmemory", "config set maxmemory 5b", "config get maxmemory",
		"config set maxmemory 18446744073709551615", "config get maxmemory",
		"config set maxmemory 18446744073709551616", "config get maxmemory",
		"config set maxmemory 9223372036854775808", "config get maxmemory",
		"config set maxmemory 18446744073709551615kb", "config get maxmemory",
		`config set maxmemory ""`, "config get maxmemory", "config set maxmemory k", "config get maxmemory",
		"config set maxmemory-policy bla", `config set maxmemory-policy ""`,
		"config set maxmemory-policy AllKeys-LRU", "config get maxmemory-policy",
		"config set maxmemory-policy volatile-ttl", "config get maxmemory-policy",
		"config set maxmemory-samples 0", "config set maxmemory-samples -1", "config set maxmemory-samples bla",
		"config set maxmemory-samples 1k", "config set maxmemory-samples 2147483648",
		"config set maxmemory-samples 2147483647", "config get maxmemory-samples",
		"config set maxmemory-samples 10", "config get maxmemory-samples",
		"config set maxmemory-eviction-tenacity 101", "config set maxmemory-eviction-tenacity 50",
		"config get maxmemory-eviction-tenacity",
		"config set maxmemory 1 maxmemory-policy bla", "config get maxmemory",
		"config get maxmemory-clients",
		"config set maxmemory 0 maxmemory-policy noeviction maxmemory-samples 5 maxmemory-eviction-tenacity 10",
	},
}

// TestMaxmemorySessionsMatchRedis runs each scripted session on both
// servers, in RESP2 and RESP3, and compares every reply byte for byte.
func TestMaxmemorySessionsMatchRedis(t *testing.T) {
	rs := redistest.Start(t)
	ns := resp.RunT(t)
	for name, s := range oomSessions {
		for _, resp3 := range []bool{false, true} {
			if d := s.run(t, resp3, rs.Addr, ns.Addr()); d != "" {
				t.Fatalf("session %s (resp3 %v): %s", name, resp3, d)
			}
		}
	}
	// A call refused inside a script is a rejected call of its command; the
	// script's command failed.
	s := session{"config resetstat", "config set maxmemory 1", `eval "return redis.call('set','x','y')" 1 x`,
		"set x y", "multi", "get x", "exec", "config set maxmemory 0"}
	if d := s.run(t, false, rs.Addr, ns.Addr()); d != "" {
		t.Fatal(d)
	}
	for _, cmd := range []string{"set", "eval", "get", "exec", "multi"} {
		if a, b := cmdstat(t, rs.Addr, cmd), cmdstat(t, ns.Addr(), cmd); a != b {
			t.Fatalf("cmdstat_%s: %q on redis-server, %q on nxkv-server", cmd, a, b)
		}
	}
}

// cmdstat returns INFO commandstats' counts of calls, rejected and failed
// calls of cmd on addr (not its times).
func cmdstat(t *testing.T, addr, cmd string) string {
	var kept []string
	for _, f := range strings.Split(info(t, addr, "commandstats")["cmdstat_"+cmd], ",") {
		if !strings.Contains(f, "usec") {
			kept = append(kept, f)
		}
	}
	return strings.Join(kept, ",")
}

// TestMaxmemoryInfoMatchesRedis compares INFO's maxmemory and
// maxmemory_human lines for bounds across the units and ranges (huge ones
// print signed, as Redis's %lld does), and checks INFO under each policy.
func TestMaxmemoryInfoMatchesRedis(t *testing.T) {
	rs := redistest.Start(t)
	ns := resp.RunT(t)
	for _, v := range []string{"0", "1", "1023", "1024", "1048575", "1073741823", "5000000000",
		"1099511627776", "1125899906842624", "1152921504606846976", "9223372036854775808", "18446744073709551615"} {
		configBoth(t, "maxmemory", v, rs.Addr, ns.Addr())
		a, b := info(t, rs.Addr, "memory"), info(t, ns.Addr(), "memory")
		for _, f := range []string{"maxmemory", "maxmemory_human", "maxmemory_policy"} {
			if a[f] != b[f] {
				t.Fatalf("maxmemory %s: %s is %q on redis-server, %q on nxkv-server", v, f, a[f], b[f])
			}
		}
	}
	for _, p := range policies {
		if d := (session{"flushall", "config resetstat", "set k v", "set t v ex 1000"}).run(t, false, rs.Addr, ns.Addr()); d != "" {
			t.Fatal(d)
		}
		configBoth(t, "maxmemory-policy", p, rs.Addr, ns.Addr())
		configBoth(t, "maxmemory", "1", rs.Addr, ns.Addr())
		if d := (session{"set k v", "exists k t"}).run(t, false, rs.Addr, ns.Addr()); d != "" {
			t.Fatalf("%s: %s", p, d) // the write evicted what the policy may
		}
		checkInfoBoth(t, p, "1", rs.Addr, ns.Addr())
		configBoth(t, "maxmemory", "0", rs.Addr, ns.Addr())
	}
}

// TestVolatileTTLOrderMatchesRedis: under volatile-ttl, writes past the
// bound evict keys with a TTL in the order of their deadlines, never a
// key without one, and both servers evict the same keys (see the file's
// doc for why the count does not depend on the servers' byte counts).
// nxkv's database 0 has one shard here, so that a sample of 64 keys sees
// every key, as Redis's sample of its expires dictionary does.
func TestVolatileTTLOrderMatchesRedis(t *testing.T) {
	rs := redistest.Start(t)
	b := engine.NewBudget(0, engine.NoEviction, 0)
	db0 := engine.New(engine.Options{Shards: 1, Budget: b})
	t.Cleanup(func() { db0.Close() })
	ns := resp.NewT(t, resp.Options{Engine: db0})
	const size = 4<<20 - 64 // a 4 MiB allocation in Redis, sds header included
	var s session
	s = append(s, "flushall", "set plain1 x", "set plain2 y", "config set maxmemory-samples 64",
		"config set maxmemory-policy volatile-ttl", "config set maxmemory "+strconv.Itoa(size*21/2))
	order := rand.Perm(8) // TTLs in a random order of creation
	for _, i := range order {
		k := "vol" + strconv.Itoa(i)
		s = append(s, fmt.Sprintf("setrange %s %d x", k, size-1), fmt.Sprintf("expire %s %d", k, 1000*(i+1)))
	}
	for i := range 6 {
		s = append(s, fmt.Sprintf("setrange big%d %d x", i, size-1))
	}
	for i := range 8 {
		s = append(s, "exists vol"+strconv.Itoa(i)) // the four nearest deadlines are gone
	}
	s = append(s, "exists plain1 plain2 big0 big1 big2 big3 big4 big5", "dbsize")
	if d := s.run(t, false, rs.Addr, ns.Addr()); d != "" {
		t.Fatal(d)
	}
	for _, addr := range []string{rs.Addr, ns.Addr()} {
		c := dialRaw(t, addr)
		for i := range 8 {
			r, _ := c.do([]string{"exists", "vol" + strconv.Itoa(i)})
			if want := map[bool]string{true: ":0\r\n", false: ":1\r\n"}[i < 4]; string(r) != want {
				t.Fatalf("%s: exists vol%d = %q, want %q (the four nearest deadlines evicted)", addr, i, r, want)
			}
		}
		if ev := info(t, addr, "stats")["evicted_keys"]; ev != "4" {
			t.Fatalf("%s: evicted_keys %s, want 4", addr, ev)
		}
	}
	configBoth(t, "maxmemory", "0", rs.Addr, ns.Addr())
	flushBoth(t, rs.Addr, ns.Addr())
}

// TestMaxmemoryDiffCatchesPlantedBug shows the sessions fail when nxkv
// admits commands without checking the bound.
func TestMaxmemoryDiffCatchesPlantedBug(t *testing.T) {
	rs := redistest.Start(t)
	ns := resp.RunT(t)
	s := oomSessions["multi"]
	if d := s.run(t, false, rs.Addr, ns.Addr()); d != "" {
		t.Fatalf("before planting: %s", d)
	}
	ns.PlantUncheckedMemory()
	if d := s.run(t, false, rs.Addr, ns.Addr()); d == "" {
		t.Fatal("the sessions found no difference with the memory check planted out")
	}
}
