package lua_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/nxkv/nxkv/resp/internal/lua"
)

// TestBuiltinPanicStopsScript plants a global Go function that panics and
// calls it from scripts directly and from every place Go code calls back
// into Lua (pcall, xpcall and its handler, coroutines, gsub, table.sort, a
// metamethod): each time Run returns the panic with its value, the
// builtin's name and the stack, writes no reply, and the script runs
// nothing after the panic, whatever caught its error (the Caller gets no
// command, an endless loop after pcall ends). The Runtime then runs
// scripts as before.
func TestBuiltinPanicStopsScript(t *testing.T) {
	rt := lua.New(lua.Options{Version: "7.0.15"})
	defer rt.Close()
	undo := rt.PlantPanic("boom", "planted panic")
	for _, src := range []string{
		`return boom()`,
		`return {pcall(boom)}`,
		`pcall(boom) redis.call('GET', 'after') return 1`,
		`pcall(pcall, boom) while true do end`,
		`local ok, e = pcall(boom) if not ok then redis.call('GET', e) end`,
		`xpcall(boom, function(e) redis.call('GET', 'handler') end) return 1`,
		`xpcall(function() return 1 end, boom) return boom()`,
		`coroutine.wrap(boom)()`,
		`coroutine.resume(coroutine.create(function() boom() end)) redis.call('GET', 'after')`,
		`string.gsub('abc', '%w', function(c) boom() end) redis.call('GET', 'after')`,
		`table.sort({3, 2, 1}, function(a, b) pcall(boom) return a < b end) redis.call('GET', 'after')`,
		`local t = setmetatable({}, {__index = function() return boom() end}) return pcall(function() return t.x end)`,
		`return pcall(string.rep, 'x', 2, boom())`,
	} {
		fn, err := lua.Compile(src)
		if err != nil {
			t.Fatalf("Compile(%q): %v", src, err)
		}
		var w record
		c := &caller{}
		err = rt.Run(fn, lua.Input{SHA: "abc"}, c, &w)
		p, ok := err.(*lua.PanicError)
		if !ok {
			t.Errorf("%s: Run returned %v (reply %s), want a *PanicError", src, err, w)
			continue
		}
		if p.Func != "boom" || p.Value != "planted panic" || !strings.Contains(p.Stack, "runtime/debug.Stack") {
			t.Errorf("%s: PanicError{Func: %q, Value: %v}, stack %d bytes; want boom, the planted value and the stack",
				src, p.Func, p.Value, len(p.Stack))
		}
		if len(w) != 0 {
			t.Errorf("%s: Run wrote %s, want nothing (the caller replies)", src, w)
		}
		if len(c.calls) != 0 {
			t.Errorf("%s: the script ran commands after the panic: %q", src, c.calls)
		}
	}
	undo()
	in := lua.Input{SHA: "abc", Argv: [][]byte{[]byte("a1")}}
	if got, _ := run(t, rt, `return {pcall(string.find, 'abc', 'b')}`, in); got != "array:3 int:1 int:2 int:2" {
		t.Errorf("after the panics: got %s", got)
	}
}

// TestEveryBuiltinContained: every Go function a script can reach is
// wrapped to contain its panics, and the check finds one that is not.
func TestEveryBuiltinContained(t *testing.T) {
	rt := lua.New(lua.Options{})
	defer rt.Close()
	if bad := lua.UnwrappedBuiltins(rt, false); len(bad) > 0 {
		t.Errorf("Go functions that do not contain their panics: %q", bad)
	}
	if bad := lua.UnwrappedBuiltins(rt, true); !slices.ContainsFunc(bad, func(s string) bool {
		return strings.HasSuffix(s, ".unwrapped")
	}) {
		t.Errorf("the planted unwrapped function was not found: %q", bad)
	}
}
