package resp_test

// Attacks by misbehaving scripts: each must get an error reply (or its
// answer) in bounded time and memory, and leave the server serving.

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nxkv/nxkv/resp"
)

// evalReply runs one EVAL of src on a fresh connection of s and returns the
// reply's bytes.
func evalReply(s *resp.Server, src string, args ...string) []byte {
	return resp.Serve(s, encode(append([]string{"eval", src, "0"}, args...)))
}

// TestScriptStringRepTooLarge: string.rep asked for a terabyte used to
// abort the whole process ("fatal error: runtime: out of memory", which no
// recover catches). It is now an error, as a string past proto-max-bulk-len.
// Counts past a C int wrap as in Redis's Lua (2^40 is 0: an empty string).
func TestScriptStringRepTooLarge(t *testing.T) {
	s := resp.New(resp.Options{})
	defer s.Close()
	for _, src := range []string{
		`return string.rep("x", 2^31-1)`,
		`return ("xy"):rep(2^30)`,
		`return string.rep("x", 2^32+2^31-1)`,
	} {
		out := evalReply(s, src)
		if !bytes.HasPrefix(out, []byte("-ERR ")) || !bytes.Contains(out, []byte("resulting string too large")) {
			t.Errorf("%s: got %q, want a 'resulting string too large' error", src, out)
		}
	}
	for _, src := range []string{`return string.rep("x", 2^40)`, `return string.rep("x", 2^62)`} {
		if out := evalReply(s, src); string(out) != "$0\r\n\r\n" {
			t.Errorf("%s: got %q, want an empty string (the count wraps to 0)", src, out)
		}
	}
	if out := evalReply(s, `return #string.rep("ab", 1000)`); string(out) != ":2000\r\n" {
		t.Errorf("small string.rep: got %q", out)
	}
}

// TestScriptHugeResultCounts: unpack and string.byte asked for millions of
// results used to run for minutes (no script time limit inside a Go
// builtin) while holding the database. Lua 5.1, as Redis runs it, refuses
// more than its C stack (8000 slots) with an error.
func TestScriptHugeResultCounts(t *testing.T) {
	s := resp.New(resp.Options{})
	defer s.Close()
	for src, want := range map[string]string{
		`return unpack({}, 1, 1e8)`:                       "too many results to unpack",
		`return unpack({}, -2^31, 2^31-1)`:                "too many results to unpack",
		`return string.byte(string.rep("x", 1e7), 1, -1)`: "string slice too long",
	} {
		out := evalReply(s, src)
		if !bytes.HasPrefix(out, []byte("-ERR ")) || !bytes.Contains(out, []byte(want)) {
			t.Errorf("%s: got %q, want an error with %q", src, out, want)
		}
	}
	for src, want := range map[string]string{
		`return {unpack({1, 2, 3})}`:              "*3\r\n:1\r\n:2\r\n:3\r\n",
		`return #{unpack({}, 1, 7000)}`:           ":0\r\n",
		`return select('#', unpack({}, 1, 7000))`: ":7000\r\n",
		`return {string.byte("abc", 1, -1)}`:      "*3\r\n:97\r\n:98\r\n:99\r\n",
		`return {string.byte("abc")}`:             "*1\r\n:97\r\n",
		`return {unpack({1, 2}, 3, 1)}`:           "*0\r\n",
	} {
		if out := evalReply(s, src); string(out) != want {
			t.Errorf("%s: got %q, want %q", src, out, want)
		}
	}
}

// TestScriptSharedTableReply: a reply that refers to the same table many
// times (a cycle, or {t,t} nested) expands exponentially when converted;
// it used to grow the reply buffer without bound while holding the
// database, after the script's time limit had stopped counting. It is now
// an error, and the connection still serves.
func TestScriptSharedTableReply(t *testing.T) {
	// The limit is proto-max-bulk-len; a small one keeps the test fast.
	s := resp.New(resp.Options{MaxBulkLen: 1 << 20})
	defer s.Close()
	for _, src := range []string{
		`local t = {} t[1] = t t[2] = t return t`,
		`local t = {} for i = 1, 80 do t = {t, t} end return t`,
		`redis.setresp(3) local m = {} m.map = {a = m, b = m} return m`,
		`local s = string.rep("x", 1e5) local t = {} for i = 1, 100 do t[i] = s end return t`,
	} {
		out := resp.Serve(s, append(encode([]string{"eval", src, "0"}), encode([]string{"ping"})...))
		if !bytes.HasPrefix(out, []byte("-ERR ")) || !bytes.Contains(out, []byte("reply too large")) ||
			!bytes.HasSuffix(out, []byte("+PONG\r\n")) {
			t.Errorf("%s: got %.200q, want a 'reply too large' error then PONG", src, out)
		}
	}
	// Shared tables within the limit still convert as Redis does.
	if out := evalReply(s, `local t = {1} return {t, t}`); string(out) != "*2\r\n*1\r\n:1\r\n*1\r\n:1\r\n" {
		t.Errorf("small shared table: got %q", out)
	}
	if out := evalReply(s, `local t = {} t[1] = t return t`); !strings.Contains(string(out), "reached lua stack limit") {
		t.Errorf("deep cycle: got %.100q, want the stack limit error", out)
	}
}

// TestScriptAbandonedCoroutinesFreed: every coroutine a script creates
// gets a child of its interpreter's context, released only when the
// coroutine finishes. Interpreters are pooled, so the contexts of
// coroutines a script left suspended or never started used to stay
// reachable for the interpreter's life, about 160 bytes each: memory
// growing without bound for a client running such a script in a loop.
func TestScriptAbandonedCoroutinesFreed(t *testing.T) {
	for _, tc := range []struct{ name, src string }{
		{"create", `for i = 1, 1000 do coroutine.create(function() end) end
			for i = 1, 1000 do local co = coroutine.create(function() coroutine.yield() end) coroutine.resume(co) end
			return 1`},
		{"wrap", `for i = 1, 2000 do local f = coroutine.wrap(function() coroutine.yield() end) f() end
			return 1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := resp.New(resp.Options{})
			defer s.Close()
			// The script's thousands of coroutines take a fraction of a
			// second, but several seconds under -race on a loaded machine:
			// past the five-second limit, which this test is not about.
			resp.SetScriptLimit(s, time.Minute)
			run := func() {
				t.Helper()
				if out := evalReply(s, tc.src); string(out) != ":1\r\n" {
					t.Fatalf("EVAL = %q, want :1", out)
				}
			}
			heap := func() uint64 {
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				return ms.HeapAlloc
			}
			run()
			before := heap()
			for range 30 {
				run()
			}
			after := heap()
			// The 60,000 contexts kept would hold about 10 MB; freed, the
			// heap barely moves.
			if after > before+4<<20 {
				t.Fatalf("heap grew from %d MB to %d MB over 30 runs: abandoned coroutines are kept", before>>20, after>>20)
			}
		})
	}
}

// TestKeysPatternNestingBounded: globMatch recursed once per '*' that
// matched, so KEYS (or SCAN MATCH) with a 32 MB pattern of "*a" against a
// 16 MB key of a's overflowed the goroutine stack: "fatal error: stack
// overflow", which no recover catches, took the whole server down. As
// Redis does since the fix of CVE-2024-31228, matching gives up (no
// match) past 1000 nested '*'s.
func TestKeysPatternNestingBounded(t *testing.T) {
	s := resp.New(resp.Options{})
	defer s.Close()
	n := 16 << 20
	s.Set(strings.Repeat("a", n), "v")
	out := resp.Serve(s, encode([]string{"keys", strings.Repeat("*a", n) + "b"}))
	if string(out) != "*0\r\n" {
		t.Fatalf("got %.100q, want an empty array", out)
	}
	s.Del(strings.Repeat("a", n))
	// Within the limit, patterns match as before.
	s.Set(strings.Repeat("a", 3000), "v")
	s.Set(strings.Repeat("a", 2000), "v")
	out = resp.Serve(s, encode([]string{"keys", strings.Repeat("*a", 999)}))
	if !strings.HasPrefix(string(out), "*2\r\n") {
		t.Fatalf("999 stars: got %.100q, want both keys", out)
	}
}

// TestScriptCoroutineNestingBounded: coroutines resumed inside one another
// nest Go calls and interpreter stacks without a limit in gopher-lua, and
// unwinding thousands of them ignores the script time limit: a recursion
// through coroutine.wrap answered "Script killed" only after 50 s, one
// through coroutine.resume ran for minutes, the database locked all along.
// As in Lua 5.1, nesting now stops at 200 with "C stack overflow".
func TestScriptCoroutineNestingBounded(t *testing.T) {
	s := resp.New(resp.Options{})
	defer s.Close()
	out := evalReply(s, `local function f() return coroutine.wrap(f)() end return f()`)
	if !bytes.HasPrefix(out, []byte("-ERR ")) || !bytes.Contains(out, []byte("C stack overflow")) {
		t.Errorf("wrap recursion: got %.200q, want a C stack overflow error", out)
	}
	out = evalReply(s, `local function f() local co = coroutine.create(f) local ok, err = coroutine.resume(co)
		if not ok then return err end return err end return f()`)
	if !bytes.Contains(out, []byte("C stack overflow")) {
		t.Errorf("resume recursion: got %.200q, want the C stack overflow error returned", out)
	}
	// Ordinary coroutines still work.
	out = evalReply(s, `local co = coroutine.wrap(function(a) local b = coroutine.yield(a + 1) return b * 2 end)
		return {co(1), co(5)}`)
	if string(out) != "*2\r\n:2\r\n:10\r\n" {
		t.Errorf("wrap: got %q", out)
	}
	out = evalReply(s, `local co = coroutine.create(function() coroutine.yield(1) error("boom") end)
		local a, b = coroutine.resume(co) local c, d = coroutine.resume(co) return {tostring(a), b, tostring(c), d}`)
	if !bytes.HasPrefix(out, []byte("*4\r\n$4\r\ntrue\r\n:1\r\n$5\r\nfalse\r\n")) || !bytes.Contains(out, []byte("boom")) {
		t.Errorf("resume: got %q", out)
	}
}

// TestScriptSlowBuiltinStopped: the script time limit is checked between
// Lua instructions, never inside a Go builtin, so one call of a builtin
// that runs for minutes used to hold the database locked (and its event
// loop) for minutes, whatever the limit said: gopher-lua's pattern matcher
// backtracks without limit (the find below is O(n^4); it was still running
// after 30 s), and its gsub copied the whole string once per match
// (quadratic). The pattern functions are now the package's own: the
// matcher checks the script's context as it goes, and gsub is linear.
func TestScriptSlowBuiltinStopped(t *testing.T) {
	s := resp.New(resp.Options{})
	defer s.Close()
	resp.SetScriptLimit(s, 100*time.Millisecond)
	for _, src := range []string{
		`return string.find(string.rep("a", 5000), ".-.-.-.-b")`,
		`return string.match(string.rep("a", 5000), "(.-)(.-)(.-)(.-)b")`,
		`for m in string.gmatch(string.rep("a", 5000), ".-.-.-.-b") do end`,
		`return string.gsub(string.rep("a", 5000), ".-.-.-.-b", "")`,
		`return pcall(string.find, string.rep("a", 5000), ".-.-.-.-b")`,
	} {
		out := evalReply(s, src)
		if !bytes.Contains(out, []byte("Script killed")) {
			t.Errorf("%s: got %.100q, want the script killed at the time limit", src, out)
		}
	}
	// The server goes on serving scripts.
	if out := evalReply(s, `return {string.find("abc", "b")}`); string(out) != "*2\r\n:2\r\n:2\r\n" {
		t.Errorf("find after a killed script: got %q", out)
	}
	resp.SetScriptLimit(s, 0)
	out := evalReply(s, `local s = string.rep("a", 300000) return #s:gsub(".", "%0%0")`)
	if string(out) != ":600000\r\n" {
		t.Errorf("gsub of 300,000 matches: got %.100q, want :600000", out)
	}
}

// TestScriptMemoryBounded: a script may allocate as fast as the machine
// fills memory (here a table of 16 MB strings held 1.3 GB when the time
// limit stopped it, on a VM that faults memory in at a few hundred MB/s; a
// faster machine runs out of memory first, and then the process dies: no
// recover catches that). gopher-lua accounts no memory, so a watchdog that
// polls the heap while a script runs stops it (here at 32 MB of growth;
// 1 GiB by default).
func TestScriptMemoryBounded(t *testing.T) {
	s := resp.New(resp.Options{})
	defer s.Close()
	resp.SetScriptMemory(s, 32<<20)
	out := evalReply(s, `local t = {} for i = 1, 64 do t[i] = string.rep(tostring(i), 8388608) end return #t`)
	if !bytes.Contains(out, []byte("Script killed: it grew the heap")) {
		t.Fatalf("a table of 8 MB strings: got %.200q, want the script killed", out)
	}
	// The server goes on serving scripts.
	if out := evalReply(s, `return 1 + 1`); string(out) != ":2\r\n" {
		t.Errorf("script after a killed one: got %q", out)
	}
}

// TestScriptPatternLimits: gsub's result is held to the bulk-string limit
// (gopher-lua's grew without one), and the matcher's recursion to 200
// levels, as in Lua 5.2 and later, where 5.1 recursed until its C stack
// overflowed.
func TestScriptPatternLimits(t *testing.T) {
	s := resp.New(resp.Options{MaxBulkLen: 1 << 20})
	defer s.Close()
	out := evalReply(s, `return string.gsub(string.rep("a", 1000), "", string.rep("b", 10000))`)
	if !bytes.HasPrefix(out, []byte("-ERR ")) || !bytes.Contains(out, []byte("resulting string too large")) {
		t.Errorf("gsub past the bulk limit: got %.200q, want an error", out)
	}
	// One match whose replacement repeats it thousands of times: the
	// limit holds within the match (it was checked only between matches,
	// so this built 600 MB before failing).
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out = evalReply(s, `return #string.gsub(string.rep("a", 100000), ".+", string.rep("%0", 6000))`)
	runtime.ReadMemStats(&after)
	if !bytes.Contains(out, []byte("resulting string too large")) {
		t.Errorf("gsub of one huge replacement: got %.200q, want an error", out)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("gsub of one huge replacement allocated %d MB before failing, want at most 64", grew>>20)
	}
	// string.format of many %s of one large argument: each item is
	// small to write, the whole is not.
	out = evalReply(s, `local big = string.rep("x", 100000) local t = {} for i = 1, 5000 do t[i] = big end
		return #string.format(string.rep("%s", 5000), unpack(t))`)
	if !bytes.Contains(out, []byte("resulting string too large")) {
		t.Errorf("format of 5,000 copies of 100 kB: got %.200q, want an error", out)
	}
	// %q writes a NUL as four bytes: the limit holds inside one item.
	runtime.ReadMemStats(&before)
	out = evalReply(s, `return #string.format("%q", string.rep("\0", 1000000))`)
	runtime.ReadMemStats(&after)
	if !bytes.Contains(out, []byte("resulting string too large")) {
		t.Errorf("%%q of 1 MB of NULs: got %.200q, want an error", out)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Errorf("%%q of 1 MB of NULs allocated %d MB before failing, want at most 8", grew>>20)
	}
	// Doubling a string by concatenation: 25 rounds reach 32 MB.
	out = evalReply(s, `local s = "x" for i = 1, 25 do s = s .. s end return #s`)
	if !bytes.Contains(out, []byte("string length overflow")) {
		t.Errorf("a string doubled 25 times: got %.200q, want an error", out)
	}
	out = evalReply(s, `return {string.find(string.rep("a", 300), string.rep("a?", 300))}`)
	if !bytes.Contains(out, []byte("pattern too complex")) {
		t.Errorf("300 nested optional items: got %.200q, want pattern too complex", out)
	}
	out = evalReply(s, `return {string.find(string.rep("a", 150), string.rep("a?", 150))}`)
	if string(out) != "*2\r\n:1\r\n:150\r\n" {
		t.Errorf("150 nested optional items: got %.200q, want a match of 1..150", out)
	}
}

// TestInfoInsideTransaction runs INFO from a script and from MULTI/EXEC.
// It used to hang the server: a script runs holding its database's
// section, and INFO's keyspace section locked every database again to
// count its keys, waiting for ever on the section it ran in (and every
// later command on that database with it). A script that builds the name
// at run time, unseen when its section is chosen, gets an error instead.
func TestInfoInsideTransaction(t *testing.T) {
	s := resp.New(resp.Options{})
	defer s.Close()
	if out := resp.Serve(s, encode([]string{"set", "a", "1"})); string(out) != "+OK\r\n" {
		t.Fatalf("SET a 1 = %q", out)
	}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"script", string(encode([]string{"eval", `return redis.call('INFO', 'keyspace')`, "0"})), "db0:keys=1,expires=0"},
		{"script, default sections", string(encode([]string{"eval", `return redis.call('info')`, "0"})), "db0:keys=1,expires=0"},
		{"multi", string(encode([]string{"multi"})) + string(encode([]string{"info", "keyspace"})) + string(encode([]string{"exec"})), "db0:keys=1,expires=0"},
		{"script, name built at run time", string(encode([]string{"eval", `return redis.call('IN' .. 'FO', 'keyspace')`, "0"})), "INFO keyspace needs every database"},
	} {
		done := make(chan []byte, 1)
		go func() { done <- resp.Serve(s, []byte(tc.in)) }()
		select {
		case out := <-done:
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("%s: got %.200q, want it to contain %q", tc.name, out, tc.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no reply in 10s", tc.name)
		}
	}
	if out := resp.Serve(s, encode([]string{"get", "a"})); string(out) != "$1\r\n1\r\n" {
		t.Errorf("GET a after the transactions = %q, want 1", out)
	}
}
