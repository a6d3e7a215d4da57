package lua

// This file holds the redis table scripts call: redis.call and pcall, which
// hand commands to the run's Caller, error_reply, status_reply, sha1hex,
// log, setresp, and the controls of replication and debugging, which do
// nothing here.

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"
	"unsafe"

	lua "github.com/yuin/gopher-lua"

	"github.com/nxkv/nxkv/resp/internal/cnum"
)

// errTable returns {err=msg}.
func errTable(L *lua.LState, msg string) *lua.LTable {
	t := L.CreateTable(0, 1)
	t.RawSetString("err", lua.LString(msg))
	return t
}

// luaArg converts a redis.call argument: strings as they are, numbers as
// Redis 7.0 prints them (C's "%.17g": inf, -inf, nan, -nan); ok is false
// for other types.
func luaArg(v lua.LValue) ([]byte, bool) {
	switch v := v.(type) {
	case lua.LString:
		return unsafe.Slice(unsafe.StringData(string(v)), len(v)), true
	case lua.LNumber:
		return []byte(cnum.FormatDouble(float64(v))), true
	}
	return nil, false
}

// newRedisLib returns the redis table: call, pcall, error_reply,
// status_reply, sha1hex, log, setresp and the no-op replication controls.
func (v *vm) newRedisLib() *lua.LTable {
	L := v.L
	t := L.NewTable()
	fns := map[string]lua.LGFunction{
		"call":    func(L *lua.LState) int { return v.redisCall(L, true) },
		"pcall":   func(L *lua.LState) int { return v.redisCall(L, false) },
		"setresp": v.setResp,
		"error_reply": func(L *lua.LState) int {
			s, ok := L.Get(1).(lua.LString)
			if L.GetTop() != 1 || !ok {
				L.Push(errTable(L, "ERR wrong number or type of arguments"))
				return 1
			}
			msg := string(s)
			if !strings.HasPrefix(msg, "-") {
				msg = "-" + msg
			}
			L.Push(errTable(L, errFromReply(msg)))
			return 1
		},
		"status_reply": func(L *lua.LState) int {
			s, ok := L.Get(1).(lua.LString)
			if L.GetTop() != 1 || !ok {
				L.Push(errTable(L, "ERR wrong number or type of arguments"))
				return 1
			}
			st := L.CreateTable(0, 1)
			st.RawSetString("ok", s)
			L.Push(st)
			return 1
		},
		"sha1hex": func(L *lua.LState) int {
			if L.GetTop() != 1 {
				L.Error(errTable(L, "ERR wrong number of arguments"), 0)
			}
			L.Push(lua.LString(SHA1Hex(L.ToString(1))))
			return 1
		},
		"log": func(L *lua.LState) int {
			if L.GetTop() < 2 {
				L.Error(errTable(L, "ERR redis.log() requires two arguments or more."), 0)
			}
			// The level converts as C's (int) of lua_tonumber: numeric
			// strings count, fractions truncate.
			f, ok := toNumber(L.Get(1))
			if !ok {
				L.Error(errTable(L, "ERR First argument must be a number (log level)."), 0)
			}
			if level := int32(cInt64(f)); level < 0 || level > 3 {
				L.Error(errTable(L, "ERR Invalid debug level."), 0)
			}
			return 0
		},
		"set_repl":           func(L *lua.LState) int { return 0 },
		"replicate_commands": func(L *lua.LState) int { L.Push(lua.LTrue); return 1 },
		"breakpoint":         func(L *lua.LState) int { L.Push(lua.LFalse); return 1 },
		"debug":              func(L *lua.LState) int { return 0 },
		"acl_check_cmd":      func(L *lua.LState) int { L.Push(lua.LTrue); return 1 },
	}
	for name, fn := range fns {
		if fn != nil {
			t.RawSetString(name, L.NewFunction(fn))
		}
	}
	for name, n := range map[string]int{"LOG_DEBUG": 0, "LOG_VERBOSE": 1, "LOG_NOTICE": 2, "LOG_WARNING": 3,
		"REPL_NONE": 0, "REPL_AOF": 1, "REPL_SLAVE": 2, "REPL_REPLICA": 2, "REPL_ALL": 3} {
		t.RawSetString(name, lua.LNumber(n))
	}
	t.RawSetString("REDIS_VERSION", lua.LString(v.rt.version))
	t.RawSetString("REDIS_VERSION_NUM", lua.LNumber(v.rt.versionNum))
	return t
}

// errFromReply turns an error reply ("-CODE msg" or "msg") into the text
// of a Lua error table: Redis keeps the code, or adds ERR when the text has
// none.
func errFromReply(s string) string {
	if strings.HasPrefix(s, "-") {
		body := s[1:]
		i := strings.IndexByte(body, ' ')
		if i < 0 {
			return "ERR " + strings.TrimRight(body, "\r\n")
		}
		return body[:i] + " " + strings.TrimRight(body[i+1:], "\r\n")
	}
	return "ERR " + strings.TrimRight(s, "\r\n")
}

func (v *vm) setResp(L *lua.LState) int {
	if L.GetTop() != 1 {
		L.Error(errTable(L, "ERR redis.setresp() requires one argument."), 0)
	}
	// As C's (int) of lua_tonumber: 2.5 is 2, "3" is 3, anything else 0.
	f, _ := toNumber(L.Get(1))
	n := int32(cInt64(f))
	if n != 2 && n != 3 {
		L.Error(errTable(L, "ERR RESP version must be 2 or 3."), 0)
	}
	v.run.resp = int(n)
	return 0
}

// redisCall is redis.call (raise true) and redis.pcall: the run's Caller
// runs the command, and its reply is converted; an error reply is raised by
// call and returned as {err=...} by pcall.
func (v *vm) redisCall(L *lua.LState, raise bool) int {
	run := v.run
	if run.panic != nil {
		// A builtin panicked and the script is being stopped: an error
		// handler (xpcall's) calls no command.
		L.Error(lua.LString(builtinPanicMsg), 0)
	}
	fail := func(msg string) int {
		t := errTable(L, msg)
		if raise {
			L.Error(t, 0)
		}
		L.Push(t)
		return 1
	}
	n := L.GetTop()
	if n == 0 {
		return fail("ERR Please specify at least one argument for this redis lib call")
	}
	args := run.argv[:0]
	for i := 1; i <= n; i++ {
		a, ok := luaArg(L.Get(i))
		if !ok {
			return fail("ERR Lua redis lib command arguments must be strings or integers")
		}
		args = append(args, a)
	}
	run.argv = args
	rep := &run.rep
	rep.reset(L, run.resp)
	run.caller.Call(args, rep)
	out := rep.result()
	if t, ok := out.(*lua.LTable); ok && rep.isErr && raise {
		L.Error(t, 0)
	}
	L.Push(out)
	return 1
}

// SHA1Hex returns the lower-case hex SHA1 of s, as Redis names scripts
// (and redis.sha1hex computes it).
func SHA1Hex(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}
