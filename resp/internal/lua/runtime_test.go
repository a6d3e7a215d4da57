package lua_test

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nxkv/nxkv/resp/internal/lua"
)

// record is a Writer that notes each reply element as "type:value".
type record []string

func (r *record) add(f string, a ...any) { *r = append(*r, fmt.Sprintf(f, a...)) }
func (r *record) Simple(s string)        { r.add("simple:%s", s) }
func (r *record) Error(s string)         { r.add("error:%s", s) }
func (r *record) CountedError(s string)  { r.add("error:%s", s) }
func (r *record) Int(n int64)            { r.add("int:%d", n) }
func (r *record) BulkString(s string)    { r.add("bulk:%s", s) }
func (r *record) Null()                  { r.add("null") }
func (r *record) Bool(b bool)            { r.add("bool:%t", b) }
func (r *record) Double(f float64)       { r.add("double:%g", f) }
func (r *record) Array(n int)            { r.add("array:%d", n) }
func (r *record) Map(n int)              { r.add("map:%d", n) }
func (r *record) Set(n int)              { r.add("set:%d", n) }

func (r record) String() string { return strings.Join(r, " ") }

// caller is a Caller that answers a few commands the way a server would,
// and records what it was asked.
type caller struct{ calls []string }

func (c *caller) Call(args [][]byte, r *lua.Reply) {
	var parts []string
	for _, a := range args {
		parts = append(parts, string(a))
	}
	c.calls = append(c.calls, strings.Join(parts, " "))
	switch strings.ToLower(string(args[0])) {
	case "get":
		r.BulkString("v")
	case "incr":
		r.Error("ERR value is not an integer or out of range")
	case "pair":
		r.Array(2)
		r.Int(1)
		r.Null()
	case "hello":
		r.Map(1)
		r.BulkString("proto")
		r.Double(1.5)
	default:
		r.Error("ERR Unknown Redis command called from script")
	}
}

func run(t *testing.T, rt *lua.Runtime, src string, in lua.Input) (string, *caller) {
	t.Helper()
	fn, err := lua.Compile(src)
	if err != nil {
		t.Fatalf("Compile(%q): %v", src, err)
	}
	var w record
	c := &caller{}
	rt.Run(fn, in, c, &w)
	return w.String(), c
}

// TestRuntimeWithoutServer runs scripts through the package's interface
// alone, with a Caller and a Writer standing in for the server: KEYS and
// ARGV reach the script, redis.call reaches the Caller with its arguments
// (numbers as "%.17g"), replies convert both ways in RESP2 and RESP3, a
// command's error is raised by call and returned by pcall, and the limits
// stop a script.
func TestRuntimeWithoutServer(t *testing.T) {
	rt := lua.New(lua.Options{Version: "7.0.15"})
	defer rt.Close()
	in := lua.Input{SHA: "abc", Keys: [][]byte{[]byte("k1")}, Argv: [][]byte{[]byte("a1"), []byte("a2")}}
	for _, tc := range []struct {
		src, want, calls string
	}{
		{`return {KEYS[1], ARGV[2], #ARGV, 2.9, true, false}`, "array:6 bulk:k1 bulk:a2 int:2 int:2 int:1 null", ""},
		{`return redis.call('GET', KEYS[1], 1.5)`, "bulk:v", "GET k1 1.5"},
		{`return redis.call('PAIR')`, "array:2 int:1 null", "PAIR"},
		{`redis.setresp(3) return {redis.call('PAIR')[2] == nil, redis.call('HELLO').map.proto.double}`,
			"array:2 bool:true int:1", "PAIR HELLO"},
		{`redis.setresp(3) return redis.call('HELLO')`, "map:1 bulk:proto double:1.5", "HELLO"},
		{`return redis.call('HELLO')`, "array:2 bulk:proto bulk:1.5", "HELLO"},
		{`return redis.pcall('INCR', 'x')`, "error:ERR value is not an integer or out of range", "INCR x"},
		{`redis.call('INCR', 'x') return 1`,
			"error:ERR value is not an integer or out of range script: abc, on @user_script:1.", "INCR x"},
		{`return redis.call('NOPE')`, "error:ERR Unknown Redis command called from script script: abc, on @user_script:1.", "NOPE"},
		{`return redis.call({})`, "error:ERR Lua redis lib command arguments must be strings or integers script: abc, on @user_script:1.", ""},
		{`return {redis.REDIS_VERSION, redis.REDIS_VERSION_NUM}`, "array:2 bulk:7.0.15 int:458767", ""},
		{`return {ok = 'fine\r\nx'}`, "simple:fine  x", ""},
		{`return redis.sha1hex('')`, "bulk:da39a3ee5e6b4b0d3255bfef95601890afd80709", ""},
	} {
		got, c := run(t, rt, tc.src, in)
		if got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.src, got, tc.want)
		}
		if calls := strings.Join(c.calls, " "); calls != tc.calls {
			t.Errorf("%s: the Caller got %q, want %q", tc.src, calls, tc.calls)
		}
	}

	if _, err := lua.Compile("return +"); err == nil || !strings.HasPrefix(err.Error(), "user_script:1: ") {
		t.Errorf("Compile of a syntax error: %v, want the compiler's message", err)
	}

	slow := in
	slow.Timeout = 50 * time.Millisecond
	if got, _ := run(t, rt, `while true do end`, slow); got != "error:ERR Script killed after running for 50ms" {
		t.Errorf("endless loop: got %s", got)
	}
	rt.Flush()
	if got, _ := run(t, rt, `return ARGV[1]`, in); got != "bulk:a1" {
		t.Errorf("after Flush: got %s", got)
	}
}

// BenchmarkBuiltinCall runs a script that calls Go builtins 2000 times
// (tostring, select and string.byte, in a loop): ns/op over 2000 is the
// cost of one call, wrapper included.
//
//	go test -run='^$' -bench='^BenchmarkBuiltinCall$' -count=6 ./resp/internal/lua/
func BenchmarkBuiltinCall(b *testing.B) {
	rt := lua.New(lua.Options{})
	defer rt.Close()
	fn, err := lua.Compile(`local n = 0
for i = 1, 1000 do n = n + select('#', i, i) + string.byte('a') end
for i = 1, 1000 do n = n + #tostring(n) end
return n`)
	if err != nil {
		b.Fatal(err)
	}
	in := lua.Input{SHA: "abc"}
	var w record
	c := &caller{}
	b.ReportAllocs()
	for b.Loop() {
		w = w[:0]
		rt.Run(fn, in, c, &w)
	}
	if len(w) != 1 || !strings.HasPrefix(w[0], "int:") {
		b.Fatalf("script returned %s", w)
	}
}

// TestCMsgpackSparseKeys: integer keys past gopher-lua's array part (2^20
// here) unpack into the hash part, as in Lua; keys below it make gopher-lua
// fill the array part up to them, so an unpack whose tables would pad more
// than 2^22 slots in all fails, with an error of its own, only once the
// input has been read (so Redis's own errors come first).
func TestCMsgpackSparseKeys(t *testing.T) {
	rt := lua.New(lua.Options{})
	defer rt.Close()
	for _, tc := range []struct{ src, want string }{
		{`return cmsgpack.unpack('\129\206\3\255\255\255\1')[67108863]`, "int:1"},
		{`return {pcall(cmsgpack.unpack, '\129\206\3\255\255\255\1\204')}`, "array:2 null bulk:Missing bytes in input."},
		{`return cmsgpack.unpack('\129\206\0\64\0\0\7')[4194304]`, "int:7"},
		{`return cmsgpack.unpack('\129\206\4\0\0\0\7')[67108864]`, "int:7"},
		{`return {pcall(cmsgpack.unpack, '\130\206\0\48\0\0\1\206\0\96\0\0\2')}`, "array:2 int:1 array:0"},
		{`return #cmsgpack.unpack('\148' .. string.rep('\129\206\0\15\255\255\1', 4))`, "int:4"},
		{`return {pcall(cmsgpack.unpack, '\149' .. string.rep('\129\206\0\15\255\255\1', 5))}`,
			"array:2 null bulk:nxkv: map key 1048575 would make a table too large to build"},
	} {
		if got, _ := run(t, rt, tc.src, lua.Input{SHA: "abc"}); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.src, got, tc.want)
		}
	}
}

// TestLargeIndexAllocatesLittle runs an assignment to a large integer key:
// gopher-lua filled a table's array part up to such a key with nils (a
// gigabyte for this one, in one instruction the memory watchdog cannot
// stop); it now goes to the hash part, as in Lua.
func TestLargeIndexAllocatesLittle(t *testing.T) {
	rt := lua.New(lua.Options{Version: "7.0.15"})
	defer rt.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got, _ := run(t, rt, `local t = {} t[60000000] = 1 return t[60000000]`, lua.Input{SHA: "abc"})
	runtime.ReadMemStats(&after)
	if got != "int:1" {
		t.Fatalf("reply %s, want int:1", got)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("the assignment allocated %d MB", grew>>20)
	}
}

// watcher is a lua.Watcher that kills the script once busy, if kill is set.
type watcher struct {
	busy atomic.Int32
	kill bool
}

func (w *watcher) Busy()        { w.busy.Add(1) }
func (w *watcher) Killed() bool { return w.kill && w.busy.Load() > 0 }

// TestWatcher: a script that runs past BusyAfter tells its Watcher once;
// one the Watcher kills ends with Redis's SCRIPT KILL error, where it was,
// even inside pcall; a short script never tells it. (A script not killed
// runs to its time limit, shortened here.)
func TestWatcher(t *testing.T) {
	rt := lua.New(lua.Options{Version: "7.0.15"})
	defer rt.Close()
	w := &watcher{kill: true}
	got, _ := run(t, rt, "local f = function() while true do end end while true do pcall(f) end",
		lua.Input{SHA: "abc", Watcher: w, BusyAfter: 20 * time.Millisecond})
	if want := "error:ERR Script killed by user with SCRIPT KILL... script: abc, on @user_script:1."; got != want {
		t.Fatalf("killed script: %q, want %q", got, want)
	}
	if n := w.busy.Load(); n != 1 {
		t.Fatalf("Busy called %d times", n)
	}
	w = &watcher{}
	got, _ = run(t, rt, "while true do end", lua.Input{SHA: "abc", Watcher: w, BusyAfter: 20 * time.Millisecond, Timeout: 100 * time.Millisecond})
	if !strings.HasPrefix(got, "error:ERR Script killed after running for 100ms") || w.busy.Load() != 1 {
		t.Fatalf("unkilled busy script: %q, Busy called %d times", got, w.busy.Load())
	}
	w = &watcher{kill: true}
	if got, _ = run(t, rt, "return 1", lua.Input{Watcher: w, BusyAfter: time.Millisecond}); got != "int:1" || w.busy.Load() != 0 {
		t.Fatalf("short script: %q, Busy called %d times", got, w.busy.Load())
	}
}
