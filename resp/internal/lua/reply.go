package lua

// This file converts between Lua values and replies, both ways, with
// Redis's rules: a script's result to the reply its client gets, and a
// command's reply to the value redis.call returns.

import (
	"math"

	lua "github.com/yuin/gopher-lua"

	"github.com/nxkv/nxkv/resp/internal/cnum"
)

// luaReplySize subtracts from budget the approximate size of v's reply as
// writeLua writes it, and returns what is left, stopping once it is
// negative. A table the reply refers to many times is counted each time,
// as it is written, so a cycle, or a table nested in itself twice over,
// exhausts the budget instead of writing an exponential reply (Redis
// would; the budget is nxkv's).
func luaReplySize(v lua.LValue, depth, budget int) int {
	const elem = 16 // a reply header or small value, with some slack
	budget -= elem
	if s, ok := v.(lua.LString); ok {
		return budget - len(s)
	}
	t, ok := v.(*lua.LTable)
	if !ok || budget < 0 || depth > maxLuaDepth {
		return budget
	}
	if e, ok := t.RawGetString("err").(lua.LString); ok {
		return budget - len(e)
	}
	if s, ok := t.RawGetString("ok").(lua.LString); ok {
		return budget - len(s)
	}
	if _, ok := t.RawGetString("double").(lua.LNumber); ok {
		return budget
	}
	if m, ok := t.RawGetString("map").(*lua.LTable); ok {
		for k, val := m.Next(lua.LNil); k != lua.LNil && budget >= 0; k, val = m.Next(k) {
			budget = luaReplySize(k, depth+1, budget)
			budget = luaReplySize(val, depth+1, budget)
		}
		return budget
	}
	if s, ok := t.RawGetString("set").(*lua.LTable); ok {
		for k, _ := s.Next(lua.LNil); k != lua.LNil && budget >= 0; k, _ = s.Next(k) {
			budget = luaReplySize(k, depth+1, budget)
		}
		return budget
	}
	for i := 1; budget >= 0; i++ {
		e := t.RawGetInt(i)
		if e == lua.LNil {
			break
		}
		budget = luaReplySize(e, depth+1, budget)
	}
	return budget
}

// writeLua converts a script's return value to a reply with Redis's rules:
// strings are bulk strings, numbers integers (truncated), true 1 and false
// nil (RESP2 script replies) or booleans (after redis.setresp(3)), tables
// with err or ok errors and status replies, {double=}, {map=} and {set=}
// their RESP3 types, and other tables arrays up to the first nil.
func writeLua(w Writer, v lua.LValue, resp, depth int) {
	switch v := v.(type) {
	case lua.LString:
		w.BulkString(string(v))
	case lua.LNumber:
		w.Int(luaInt(float64(v)))
	case lua.LBool:
		switch {
		case resp == 3:
			w.Bool(bool(v))
		case bool(v):
			w.Int(1)
		default:
			w.Null()
		}
	case *lua.LTable:
		if depth > maxLuaDepth {
			w.Error("ERR reached lua stack limit")
			return
		}
		if e, ok := v.RawGetString("err").(lua.LString); ok {
			writeErrorOf(w, v, sanitize(string(e))) // as "-%s": {err="-X"} replies --X, as in Redis
			return
		}
		if s, ok := v.RawGetString("ok").(lua.LString); ok {
			w.Simple(sanitize(string(s)))
			return
		}
		if d, ok := v.RawGetString("double").(lua.LNumber); ok {
			w.Double(float64(d))
			return
		}
		if m, ok := v.RawGetString("map").(*lua.LTable); ok {
			n := 0
			m.ForEach(func(lua.LValue, lua.LValue) { n++ })
			w.Map(n)
			m.ForEach(func(k, val lua.LValue) {
				writeLua(w, k, resp, depth+1)
				writeLua(w, val, resp, depth+1)
			})
			return
		}
		if s, ok := v.RawGetString("set").(*lua.LTable); ok {
			n := 0
			s.ForEach(func(lua.LValue, lua.LValue) { n++ })
			w.Set(n)
			s.ForEach(func(k, _ lua.LValue) { writeLua(w, k, resp, depth+1) })
			return
		}
		n := 0
		for v.RawGetInt(n+1) != lua.LNil {
			n++
		}
		w.Array(n)
		for i := 1; i <= n; i++ {
			writeLua(w, v.RawGetInt(i), resp, depth+1)
		}
	default:
		w.Null()
	}
}

// luaInt converts a Lua number to an integer reply as Redis's C cast does
// on x86-64: truncation, and the minimum int64 for NaN and out-of-range
// values.
func luaInt(f float64) int64 {
	if math.IsNaN(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(f)
}

// Reply converts the reply of a command a script called to a Lua value as
// Redis does for redis.call: integers become numbers, bulk strings
// strings, nil false, a status {ok=}, an error {err=}, an array a table;
// after redis.setresp(3), RESP3's maps, sets and doubles become {map=},
// {set=} and {double=}, and its booleans and null Lua's. Its methods are
// those of a reply, in the order a command writes it; a Caller gets one
// for each call and must not keep it.
type Reply struct {
	ls    *lua.LState // the script's interpreter
	resp  int
	stack []luaAgg
	out   lua.LValue
	isErr bool
}

// luaAgg is an aggregate being filled.
type luaAgg struct {
	t     *lua.LTable
	inner *lua.LTable // for maps and sets, the table under map= / set=
	left  int         // elements still expected
	kind  byte        // '*', '%', '~'
	key   lua.LValue  // a map's pending key
	n     int
}

func (r *Reply) reset(L *lua.LState, resp int) {
	r.ls, r.resp, r.out, r.isErr = L, resp, lua.LNil, false
	r.stack = r.stack[:0]
}

func (r *Reply) result() lua.LValue { return r.out }

// Reset drops what was written so far, so that a Caller whose command
// failed midway can write an error instead.
func (r *Reply) Reset() {
	r.out, r.isErr = lua.LNil, false
	r.stack = r.stack[:0]
}

// RESP3 reports whether the script asked for RESP3 replies
// (redis.setresp(3)): commands then reply in RESP3's shapes.
func (r *Reply) RESP3() bool { return r.resp == 3 }

// add places a finished value in the enclosing aggregate, or as the result.
func (r *Reply) add(v lua.LValue) {
	for {
		if len(r.stack) == 0 {
			r.out = v
			return
		}
		top := &r.stack[len(r.stack)-1]
		switch top.kind {
		case '%':
			if top.key == nil {
				top.key = v
				return // a key completes nothing yet
			}
			top.inner.RawSet(top.key, v)
			top.key = nil
		case '~':
			top.inner.RawSet(v, lua.LTrue)
		default:
			top.n++
			top.t.RawSetInt(top.n, v)
		}
		top.left--
		if top.left > 0 {
			return
		}
		v = top.t
		r.stack = r.stack[:len(r.stack)-1]
	}
}

// Simple is a status reply: {ok=s}.
func (r *Reply) Simple(s string) {
	t := r.ls.CreateTable(0, 1)
	t.RawSetString("ok", lua.LString(s))
	r.add(t)
}

// Error is an error reply, s starting with its code: {err=s,
// ignore_error_stats_update=true}, as Redis builds it: the server counted
// the error when the command replied it, and the flag keeps the script's
// reply from counting it again. As the whole reply, redis.call raises it.
func (r *Reply) Error(s string) {
	if len(r.stack) == 0 {
		r.isErr = true
	}
	t := errTable(r.ls, errFromReply("-"+s))
	t.RawSetString(ignoreStatsField, lua.LTrue)
	r.add(t)
}

// ignoreStatsField marks an error table whose error the server counted
// already (Redis's name, which scripts see).
const ignoreStatsField = "ignore_error_stats_update"

// writeErrorOf writes msg, the error of table t, counting it in the
// server's error statistics unless t says it was counted.
func writeErrorOf(w Writer, t *lua.LTable, msg string) {
	if lua.LVAsBool(t.RawGetString(ignoreStatsField)) {
		w.CountedError(msg)
		return
	}
	w.Error(msg)
}

// Int is an integer reply: a number.
func (r *Reply) Int(n int64) { r.add(lua.LNumber(n)) }

// Bulk is a bulk string: a string.
func (r *Reply) Bulk(b []byte) { r.add(lua.LString(b)) }

// BulkString is Bulk of a string.
func (r *Reply) BulkString(s string) { r.add(lua.LString(s)) }

// Verbatim is a verbatim string: a string.
func (r *Reply) Verbatim(s string) { r.add(lua.LString(s)) }

// Array starts an array of n elements: a table.
func (r *Reply) Array(n int) { r.open('*', n) }

// Map starts n key-value pairs: {map=} in RESP3, a flat table of 2n
// elements in RESP2.
func (r *Reply) Map(n int) { r.open('%', n) }

// Set starts n elements: {set=} in RESP3, a table in RESP2.
func (r *Reply) Set(n int) { r.open('~', n) }

// NullArray is a nil array: as Null.
func (r *Reply) NullArray() { r.Null() }

// Null is a missing value: nil in RESP3, false in RESP2.
func (r *Reply) Null() {
	if r.resp == 3 {
		r.add(lua.LNil)
		return
	}
	r.add(lua.LFalse)
}

// Bool is a boolean: Lua's in RESP3, the number 1 or 0 in RESP2.
func (r *Reply) Bool(b bool) {
	if r.resp == 3 {
		r.add(lua.LBool(b))
		return
	}
	if b {
		r.add(lua.LNumber(1))
	} else {
		r.add(lua.LNumber(0))
	}
}

// Double is a double: {double=f} in RESP3, its "%.17g" text in RESP2.
func (r *Reply) Double(f float64) {
	if r.resp == 3 {
		t := r.ls.CreateTable(0, 1)
		t.RawSetString("double", lua.LNumber(f))
		r.add(t)
		return
	}
	r.add(lua.LString(cnum.FormatDouble(f)))
}

// open starts an aggregate of n elements: an array table, or in RESP3 a
// {map=} or {set=} table (RESP2 flattens maps into arrays).
func (r *Reply) open(kind byte, n int) {
	if r.resp != 3 && kind == '%' {
		kind, n = '*', 2*n
	}
	if r.resp != 3 && kind == '~' {
		kind = '*'
	}
	t := r.ls.CreateTable(0, 0)
	agg := luaAgg{t: t, left: n, kind: kind, inner: t}
	switch kind {
	case '%':
		agg.inner = r.ls.NewTable()
		t.RawSetString("map", agg.inner)
	case '~':
		agg.inner = r.ls.NewTable()
		t.RawSetString("set", agg.inner)
	}
	if n == 0 {
		r.add(t)
		return
	}
	r.stack = append(r.stack, agg)
}
