package lua

// This file builds an interpreter with Redis 7's environment: the globals
// Redis keeps (bit included), read-only globals and libraries, reading an
// undefined global as an error, and the builtins replaced where gopher-lua
// differs from Lua 5.1 or could run or allocate without bound inside one
// call.

import (
	"encoding/binary"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// luaPCall wraps the interpreter's pcall as Redis 7 does: an error that is
// a table with a string (or number) err field, as redis.call and
// error_reply raise, is caught as that field, so that
// pcall(redis.call, ...) gives the error's text, not a table.
func luaPCall(pcall *lua.LFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		n := pcall.GFunction(L)
		top := L.GetTop()
		if n < 2 || L.Get(top-n+1) != lua.LFalse {
			return n
		}
		if t, ok := L.Get(top - n + 2).(*lua.LTable); ok {
			if e := L.GetField(t, "err"); e.Type() == lua.LTString || e.Type() == lua.LTNumber {
				L.Replace(top-n+2, e)
			}
		}
		return n
	}
}

// newVM builds an interpreter with Redis 7.0's globals: the base functions
// it keeps, coroutine, string, math, table, bit, cjson, cmsgpack and the
// redis API, all read-only; reading an undefined global is an error.
func (rt *Runtime) newVM() *vm {
	L := lua.NewState(lua.Options{SkipOpenLibs: true, RegistrySize: 1024, RegistryMaxSize: 1 << 20,
		IncludeGoStackTrace: true}) // for the report of a panic (PanicError)
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.CoroutineLibName, lua.OpenCoroutine},
	} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	v := &vm{rt: rt, L: L, fns: map[*Function]*lua.LFunction{}, dog: newWatchdog()}
	v.newContext()

	g := L.G.Global
	for _, name := range []string{"dofile", "loadfile", "print", "_printregs", "module", "require",
		"getfenv", "setfenv", "newproxy", "_GOPHER_LUA_VERSION", "package"} {
		g.RawSetString(name, lua.LNil)
	}
	g.RawSetString("collectgarbage", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LNumber(0)); return 1 }))
	g.RawSetString("gcinfo", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LNumber(0)); return 1 }))
	g.RawSetString("error", L.NewFunction(luaError))
	g.RawSetString("pcall", L.NewFunction(luaPCall(g.RawGetString("pcall").(*lua.LFunction))))
	g.RawSetString("loadstring", L.NewFunction(v.loadString))
	g.RawSetString("bit", newBitLib(L))
	g.RawSetString("redis", v.newRedisLib())
	v.null = L.NewUserData() // JSON's null: a userdata that holds nothing
	g.RawSetString("cjson", v.newCJSON(&rt.cjson))
	g.RawSetString("cmsgpack", v.newCMsgpack())
	// Builtins that would allocate, or push values, without bound inside
	// one Go call (where the script time limit cannot stop them) get Lua
	// 5.1's limits.
	g.RawSetString("unpack", L.NewFunction(luaUnpack))
	str := g.RawGetString("string").(*lua.LTable)
	str.RawSetString("rep", L.NewFunction(v.strRep))
	str.RawSetString("byte", L.NewFunction(strByte))
	// The pattern functions are this package's own (pattern.go): they
	// stop with the script, and gsub takes linear time.
	str.RawSetString("find", L.NewFunction(strFind))
	str.RawSetString("match", L.NewFunction(strMatch))
	str.RawSetString("gmatch", L.NewFunction(v.strGmatch))
	str.RawSetString("gsub", L.NewFunction(v.strGsub))
	// Number conversions and string.format are Lua 5.1's (number.go,
	// format.go), and integer arguments may be numeric strings.
	str.RawSetString("format", L.NewFunction(v.strFormat))
	g.RawSetString("tonumber", L.NewFunction(luaToNumber))
	g.RawSetString("tostring", L.NewFunction(luaToStringFunc(g.RawGetString("tostring").(*lua.LFunction))))
	tab := g.RawGetString("table").(*lua.LTable)
	for _, w := range []struct {
		t         *lua.LTable
		name      string
		width     int // 32: a C int in Lua 5.1; 64: a ptrdiff_t
		from      int
		positions []int
	}{
		{str, "sub", 64, 0, []int{2, 3}},
		{tab, "remove", 32, 0, []int{2}},
		{g, "select", 32, 0, []int{1}},
	} {
		orig := w.t.RawGetString(w.name).(*lua.LFunction)
		w.t.RawSetString(w.name, L.NewFunction(numericArgs(orig, w.width, w.from, w.positions...)))
	}
	for _, name := range []string{"sub", "len", "upper", "lower", "reverse"} {
		orig := str.RawGetString(name).(*lua.LFunction)
		str.RawSetString(name, L.NewFunction(stringArgs(orig, 1)))
	}
	tab.RawSetString("concat", L.NewFunction(v.tableConcat))
	// Lua 5.1's deprecated table functions, which Redis's Lua keeps.
	tab.RawSetString("foreach", L.NewFunction(tableForeach))
	tab.RawSetString("foreachi", L.NewFunction(tableForeachi))
	tab.RawSetString("setn", L.NewFunction(func(L *lua.LState) int {
		if _, ok := L.Get(1).(*lua.LTable); !ok {
			luaArgError(L, 1, "setn", "table expected, got "+typeName(L, 1))
		}
		luaRaise(L, "'setn' is obsolete")
		return 0
	}))
	str.RawSetString("__index", lua.LNil) // gopher-lua's; Lua's string table has none
	str.RawSetString("char", L.NewFunction(strChar))
	str.RawSetString("dump", L.NewFunction(v.strDump))
	// Lua's math.huge is infinity; gopher-lua's is the largest finite number.
	g.RawGetString("math").(*lua.LTable).RawSetString("huge", lua.LNumber(math.Inf(1)))
	g.RawGetString("math").(*lua.LTable).RawSetString("random", L.NewFunction(v.mathRandom))
	g.RawGetString("math").(*lua.LTable).RawSetString("randomseed", L.NewFunction(v.mathRandomSeed))
	// table.insert's second argument is a position only when a third
	// follows: table.insert(t, "5") appends the string.
	insert := tab.RawGetString("insert").(*lua.LFunction)
	insertPos := numericArgs(insert, 32, 0, 2)
	tab.RawSetString("insert", L.NewFunction(func(L *lua.LState) int {
		if L.GetTop() == 3 {
			return insertPos(L)
		}
		return insert.GFunction(L)
	}))
	// Each coroutine resumed inside another nests Go calls and a new
	// interpreter stack, and gopher-lua sets no limit: recursion through
	// coroutines held the database for minutes and grew without bound.
	co := g.RawGetString("coroutine").(*lua.LTable)
	resume := co.RawGetString("resume").(*lua.LFunction)
	wrap := co.RawGetString("wrap").(*lua.LFunction)
	create := co.RawGetString("create").(*lua.LFunction)
	co.RawSetString("resume", L.NewFunction(func(L *lua.LState) int { return callNested(L, resume) }))
	co.RawSetString("create", L.NewFunction(func(L *lua.LState) int {
		v.threads = true
		L.Insert(create, 1)
		L.Call(L.GetTop()-1, 1)
		return 1
	}))
	co.RawSetString("wrap", L.NewFunction(func(L *lua.LState) int {
		v.threads = true
		L.Insert(wrap, 1)
		L.Call(L.GetTop()-1, 1)
		f := L.Get(-1)
		L.Pop(1)
		fn, ok := f.(*lua.LFunction)
		if !ok {
			L.RaiseError("coroutine.wrap returned no function")
		}
		L.Push(v.builtin("coroutine.wrap's function", func(L *lua.LState) int { return callNested(L, fn) }))
		return 1
	}))
	// PlantPanic's globals (tests only).
	rt.planted.Range(func(name, value any) bool {
		g.RawSetString(name.(string), L.NewFunction(func(L *lua.LState) int { panic(value) }))
		return true
	})

	// Libraries become read-only proxies.
	var strMT, otherMT *lua.LTable
	for _, name := range []string{"string", "math", "table", "coroutine", "bit", "redis", "cjson", "cmsgpack"} {
		real := g.RawGetString(name).(*lua.LTable)
		p := v.readonly(real)
		g.RawSetString(name, p)
		if name == "string" {
			mt := L.NewTable()
			mt.RawSetString("__index", p)
			mt.RawSetString("__metatable", lua.LFalse)
			L.SetMetatable(lua.LString(""), mt)
			otherMT = v.installOps(g, mt) // Lua 5.1's operators (ops.go)
			strMT = mt
		}
	}
	// Globals: scripts read them through env, whose misses go to g, whose
	// misses are an error; writes to env are an error.
	gmt := L.NewTable()
	gmt.RawSetString("__index", L.NewFunction(protectedTableError))
	L.SetMetatable(g, gmt)
	v.env = readonlyProxy(L, g)
	g.RawSetString("_G", v.env)
	L.Env = v.env
	// getmetatable shows read-only views of the metatables of the globals
	// and of strings, as Redis's (readonly.go).
	v.globalsMT = v.readonly(gmt)
	smt := L.CreateTable(0, 1)
	smt.RawSetString("__index", g.RawGetString("string"))
	v.stringMT = v.readonly(smt)
	v.seeThrough(g)
	// Every Go function a script can reach stops the script and is
	// reported if it panics (builtin.go).
	v.typeMTs = map[string]*lua.LTable{"''": strMT, "nil": otherMT}
	v.wrapBuiltins()
	v.handle = v.builtin("the error handler", v.errorHandler)
	return v
}

// luaError is Lua 5.1's error: a string or number message gets the
// position of the function level calls up (1: error's caller), if that is
// a Lua function; level 0 raises the value as it is.
func luaError(L *lua.LState) int {
	obj := L.Get(1) // error() raises nil
	level := optCInt(L, 2, "error", 1)
	if s, ok := toStringArg(obj); ok && level > 0 {
		obj = lua.LString(luaWhere(L, int(level)) + s)
	}
	L.Error(obj, 0)
	return 0
}

// callNested calls fn, which resumes a coroutine, with the arguments on
// L's stack and returns its results, or raises Lua 5.1's "C stack
// overflow" when L is already maxCoroutineNesting coroutines deep.
func callNested(L *lua.LState, fn *lua.LFunction) int {
	depth := 0
	for p := L; p.Parent != nil; p = p.Parent {
		depth++
	}
	if depth >= maxCoroutineNesting {
		L.RaiseError("C stack overflow")
	}
	L.Insert(fn, 1)
	L.Call(L.GetTop()-1, lua.MultRet)
	return L.GetTop()
}

// luaUnpack is Lua 5.1's unpack, which refuses to return more values than
// its stack holds; gopher-lua's pushes any number, for as long as it takes.
// Its bounds are C ints, and so is the count: unpack(t, 0/0) starts at 0
// (NaN converts to 0 there), and a range whose count wraps is refused.
func luaUnpack(L *lua.LState) int {
	t := L.CheckTable(1)
	i := optCInt(L, 2, "unpack", 1)
	e := optCInt(L, 3, "unpack", int32(t.Len()))
	if i > e {
		return 0
	}
	n := e - i + 1 // wraps as C's int does
	if n <= 0 || n >= maxLuaResults {
		luaRaise(L, "too many results to unpack")
	}
	for k := range n {
		L.Push(t.RawGetInt(int(i + k)))
	}
	return int(n)
}

// strByte is Lua 5.1's string.byte: the end defaults to the start, and at
// most the stack's worth of bytes are returned.
func strByte(L *lua.LState) int {
	s := checkLuaString(L, 1, "byte")
	l := int64(len(s))
	i := optInteger(L, 2, 1)
	e := optInteger(L, 3, i)
	if i < 0 {
		i += l + 1
	}
	if e < 0 {
		e += l + 1
	}
	i, e = max(i, 1), min(e, l)
	if i > e {
		return 0
	}
	if e-i >= maxLuaResults {
		luaRaise(L, "stack overflow (string slice too long)")
	}
	for k := i; k <= e; k++ {
		L.Push(lua.LNumber(s[k-1]))
	}
	return int(e - i + 1)
}

// strRep is string.rep held to proto-max-bulk-len: gopher-lua's allocates
// whatever is asked, and a failed allocation of a terabyte aborts the
// process.
func (v *vm) strRep(L *lua.LState) int {
	s := checkLuaString(L, 1, "rep")
	n := int(luaCInt(L, 2, "rep"))
	if n <= 0 || len(s) == 0 {
		L.Push(lua.LString(""))
		return 1
	}
	if n > v.rt.maxBulk/len(s) {
		luaRaise(L, "resulting string too large")
	}
	L.Push(lua.LString(strings.Repeat(s, n)))
	return 1
}

// loadString is Lua 5.1's loadstring(s [, chunkname]): s compiled as the
// script's own code is (so with Lua 5.1's operators), named in errors as
// Lua names a chunk; nil and the message if it does not compile.
func (v *vm) loadString(L *lua.LState) int {
	src := checkLuaString(L, 1, "loadstring")
	name := src
	if L.GetTop() >= 2 && L.Get(2) != lua.LNil {
		name = checkLuaString(L, 2, "loadstring")
	}
	id := chunkID(name)
	if _, ok := v.chunks[id]; ok || len(v.chunks) < maxChunkNames {
		if v.chunks == nil {
			v.chunks = map[string]string{}
		}
		v.chunks[id] = name
	}
	proto, msg := compileChunk(src, id)
	if msg != "" {
		L.Push(lua.LNil)
		L.Push(lua.LString(msg))
		return 2
	}
	L.Push(L.NewFunctionFromProto(proto))
	return 1
}

// tableForeach is Lua 5.1's table.foreach(t, f): f(k, v) for each entry,
// in next's order, until f returns something other than nil, which it
// returns.
func tableForeach(L *lua.LState) int {
	t, f := tableAndFunction(L, "foreach")
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		L.Push(f)
		L.Push(k)
		L.Push(v)
		L.Call(2, 1)
		if r := L.Get(-1); r != lua.LNil {
			return 1
		}
		L.Pop(1)
	}
	return 0
}

// tableForeachi is Lua 5.1's table.foreachi(t, f): f(i, t[i]) for i from 1
// to #t, until f returns something other than nil, which it returns.
func tableForeachi(L *lua.LState) int {
	t, f := tableAndFunction(L, "foreachi")
	n := t.Len()
	for i := 1; i <= n; i++ {
		L.Push(f)
		L.Push(lua.LNumber(i))
		L.Push(t.RawGetInt(i))
		L.Call(2, 1)
		if r := L.Get(-1); r != lua.LNil {
			return 1
		}
		L.Pop(1)
	}
	return 0
}

// tableAndFunction checks the arguments of foreach and foreachi.
func tableAndFunction(L *lua.LState, fname string) (*lua.LTable, *lua.LFunction) {
	t, ok := L.Get(1).(*lua.LTable)
	if !ok {
		luaArgError(L, 1, fname, "table expected, got "+typeName(L, 1))
	}
	f, ok := L.Get(2).(*lua.LFunction)
	if !ok {
		luaArgError(L, 2, fname, "function expected, got "+typeName(L, 2))
	}
	return t, f
}

// luaHeader is the header of a Lua 5.1 binary chunk as x86-64's Lua
// writes it: signature, version 5.1, official format, little-endian, and
// the sizes of int, size_t, an instruction and a number.
const luaHeader = "\x1bLuaQ\x00\x01\x04\x08\x04\x08\x00"

// strDump is string.dump. Redis's Lua loads no binary chunk (loadstring
// compiles every string as source, so a dump fails to compile), so what a
// dump holds past its header cannot matter to a script but for its bytes:
// it is Lua 5.1's header and the function's description (source, lines,
// upvalue and parameter counts, vararg flags), without the bytecode.
func (v *vm) strDump(L *lua.LState) int {
	f, ok := L.Get(1).(*lua.LFunction)
	if !ok {
		luaArgError(L, 1, "dump", "function expected, got "+typeName(L, 1))
	}
	if f.IsG {
		luaRaise(L, "unable to dump given function")
	}
	p := f.Proto
	src := "@" + p.SourceName
	if name, ok := v.chunks[p.SourceName]; ok {
		src = name // a chunk from loadstring
	}
	b := []byte(luaHeader)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(src)+1))
	b = append(append(b, src...), 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(p.LineDefined))
	b = binary.LittleEndian.AppendUint32(b, uint32(p.LastLineDefined))
	b = append(b, p.NumUpvalues, p.NumParameters, p.IsVarArg)
	L.Push(lua.LString(b))
	return 1
}

// chunkID is how Lua 5.1 names a chunk in messages (luaO_chunkid, in 60
// bytes): "=name" as name, "@file" as file (its last part if long), and
// source code as [string "its first line"], cut short with "...".
func chunkID(source string) string {
	const size = 60 // LUA_IDSIZE, counting C's NUL
	source = cString(source)
	switch {
	case strings.HasPrefix(source, "="):
		s := source[1:]
		return s[:min(len(s), size-1)]
	case strings.HasPrefix(source, "@"):
		s := source[1:]
		if room := size - len(" '...' ") - 1; len(s) > room {
			return "..." + s[len(s)-room:]
		}
		return s
	}
	n := strings.IndexAny(source, "\n\r")
	if n < 0 {
		n = len(source)
	}
	n = min(n, size-len(` [string "..."] `)-1)
	if n < len(source) {
		return `[string "` + source[:n] + `..."]`
	}
	return `[string "` + source + `"]`
}
