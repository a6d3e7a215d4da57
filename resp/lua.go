package resp

// This file holds the Lua interpreters that run scripts: a pool of
// gopher-lua states set up like Redis 7's (the same globals, read-only
// libraries and globals, the redis.* API), the conversions between Lua
// values and replies, and the error handler that words errors as Redis.

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// scriptTimeout is how long a script may run before it is stopped with an
// error. Redis lets a long script run and answers BUSY to everyone else; a
// script here holds the engine's locks, so it is stopped instead.
const scriptTimeout = 5 * time.Second

// maxLuaDepth bounds the nesting of tables converted to replies, as
// Redis's Lua stack limit does.
const maxLuaDepth = 1000

// maxLuaResults is Lua 5.1's C stack limit (LUAI_MAXCSTACK), past which
// unpack and string.byte refuse to return that many values.
const maxLuaResults = 8000

// maxCoroutineNesting is Lua 5.1's LUAI_MAXCCALLS: coroutines resumed
// inside one another past it fail with "C stack overflow".
const maxCoroutineNesting = 200

// vm is one Lua interpreter with the scripts it has instantiated. It is
// used by one script at a time (taken from and returned to the pool).
type vm struct {
	L      *lua.LState
	env    *lua.LTable   // the read-only global table scripts see
	libs   []*lua.LTable // read-only library proxies, checked after each run
	fns    map[string]*lua.LFunction
	gen    uint64 // the script cache generation fns belongs to
	cancel context.CancelFunc
	dog    *watchdog // stops a script past its time or memory limit
	killed bool      // the last run was stopped by the watchdog
	// threads is set when a run creates a coroutine: gopher-lua gives each
	// one a child of the interpreter's context and releases it only when
	// the coroutine finishes, so the run ends by replacing the context,
	// which releases those left unfinished.
	threads bool
	run     *scriptRun // the script running now
	runBuf  scriptRun  // reused for every run
	args    []lua.LValue
	handle  *lua.LFunction // the error handler
	// chunks maps the names (chunkID) of chunks loadstring compiled in
	// this run to the names they were given, which Redis's error replies
	// show; at most maxChunkNames, cleared after each run.
	chunks map[string]string
}

// maxChunkNames bounds vm.chunks: past it, an error reply names a chunk by
// its chunkID.
const maxChunkNames = 64

// vmPool keeps idle interpreters; creating one costs about a millisecond.
type vmPool struct {
	mu   sync.Mutex
	free []*vm // guarded by mu
}

const maxIdleVMs = 8

func (p *vmPool) get() *vm {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		v := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return v
	}
	p.mu.Unlock()
	return newVM()
}

func (p *vmPool) put(v *vm) {
	p.mu.Lock()
	if len(p.free) < maxIdleVMs {
		p.free = append(p.free, v)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	v.close()
}

func (p *vmPool) close() {
	p.mu.Lock()
	free := p.free
	p.free = nil
	p.mu.Unlock()
	for _, v := range free {
		v.close()
	}
}

func (v *vm) close() {
	v.dog.close()
	v.cancel()
	v.L.Close()
}

// newContext gives the interpreter a fresh context, which the watchdog
// cancels to stop a script, and cancels the one it replaces.
func (v *vm) newContext() {
	if v.cancel != nil {
		v.cancel()
	}
	ctx, cancel := context.WithCancel(context.Background())
	v.cancel = cancel
	v.L.SetContext(ctx)
	v.threads = false
}

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

// readonlyErr is Redis's error for writing to a global or a library.
const readonlyErr = "Attempt to modify a readonly table"

// newVM builds an interpreter with Redis 7.0's globals: the base functions
// it keeps, coroutine, string, math, table, bit and the redis API, all
// read-only; reading an undefined global is an error.
func newVM() *vm {
	L := lua.NewState(lua.Options{SkipOpenLibs: true, RegistrySize: 1024, RegistryMaxSize: 1 << 20,
		IncludeGoStackTrace: true}) // for the log of a panic (recover.go)
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
	v := &vm{L: L, fns: map[string]*lua.LFunction{}, dog: newWatchdog()}
	v.newContext()

	g := L.G.Global
	for _, name := range []string{"dofile", "loadfile", "print", "_printregs", "module", "require",
		"getfenv", "setfenv", "newproxy", "_GOPHER_LUA_VERSION", "package"} {
		g.RawSetString(name, lua.LNil)
	}
	g.RawSetString("collectgarbage", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LNumber(0)); return 1 }))
	g.RawSetString("gcinfo", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LNumber(0)); return 1 }))
	g.RawSetString("rawset", L.NewFunction(v.rawset))
	g.RawSetString("error", L.NewFunction(luaError))
	g.RawSetString("pcall", L.NewFunction(luaPCall(g.RawGetString("pcall").(*lua.LFunction))))
	g.RawSetString("loadstring", L.NewFunction(v.loadString))
	g.RawSetString("bit", newBitLib(L))
	g.RawSetString("redis", v.newRedisLib())
	// Builtins that would allocate, or push values, without bound inside
	// one Go call (where the script time limit cannot stop them) get Lua
	// 5.1's limits.
	g.RawSetString("unpack", L.NewFunction(luaUnpack))
	str := g.RawGetString("string").(*lua.LTable)
	str.RawSetString("rep", L.NewFunction(v.strRep))
	str.RawSetString("byte", L.NewFunction(strByte))
	// The pattern functions are this package's own (luapattern.go): they
	// stop with the script, and gsub takes linear time.
	str.RawSetString("find", L.NewFunction(strFind))
	str.RawSetString("match", L.NewFunction(strMatch))
	str.RawSetString("gmatch", L.NewFunction(strGmatch))
	str.RawSetString("gsub", L.NewFunction(v.strGsub))
	// Number conversions and string.format are Lua 5.1's (luanumber.go,
	// luaformat.go), and integer arguments may be numeric strings.
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
	str.RawSetString("char", L.NewFunction(strChar))
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
		L.Push(L.NewFunction(func(L *lua.LState) int { return callNested(L, fn) }))
		return 1
	}))

	// Libraries become read-only proxies.
	for _, name := range []string{"string", "math", "table", "coroutine", "bit", "redis"} {
		real := g.RawGetString(name).(*lua.LTable)
		p := v.readonly(real)
		g.RawSetString(name, p)
		if name == "string" {
			mt := L.NewTable()
			mt.RawSetString("__index", p)
			mt.RawSetString("__metatable", lua.LFalse)
			L.SetMetatable(lua.LString(""), mt)
			v.installOps(g, mt) // Lua 5.1's operators (luaops.go)
		}
	}
	// Globals: scripts read them through env, whose misses go to g, whose
	// misses are an error; writes to env are an error.
	gmt := L.NewTable()
	gmt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Script attempted to access nonexistent global variable '%s'", L.ToString(2))
		return 0
	}))
	L.SetMetatable(g, gmt)
	v.env = L.NewTable()
	emt := L.NewTable()
	emt.RawSetString("__index", g)
	emt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(readonlyErr)
		return 0
	}))
	emt.RawSetString("__metatable", lua.LFalse)
	L.SetMetatable(v.env, emt)
	g.RawSetString("_G", v.env)
	L.Env = v.env
	v.handle = L.NewFunction(v.errorHandler)
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

// readonly returns an empty table that reads through to t and refuses
// writes.
func (v *vm) readonly(t *lua.LTable) *lua.LTable {
	L := v.L
	p := L.NewTable()
	mt := L.NewTable()
	mt.RawSetString("__index", t)
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(readonlyErr)
		return 0
	}))
	mt.RawSetString("__metatable", lua.LFalse)
	L.SetMetatable(p, mt)
	v.libs = append(v.libs, p)
	return p
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
	if n > v.run.s.maxBulk()/len(s) {
		luaRaise(L, "resulting string too large")
	}
	L.Push(lua.LString(strings.Repeat(s, n)))
	return 1
}

// rawset is Lua's rawset, refusing the read-only tables as Redis does.
func (v *vm) rawset(L *lua.LState) int {
	t := L.CheckTable(1)
	if t == v.env {
		L.Error(lua.LString(readonlyErr), 0)
	}
	for _, p := range v.libs {
		if t == p {
			L.Error(lua.LString(readonlyErr), 0)
		}
	}
	key := L.CheckAny(2)
	L.RawSet(t, key, L.CheckAny(3))
	L.SetTop(1)
	return 1
}

// clean reports whether a run left the shared tables as they were; a state
// that fails is discarded rather than reused.
func (v *vm) clean() bool {
	for _, p := range v.libs {
		if k, _ := p.Next(lua.LNil); k != lua.LNil {
			return false
		}
	}
	n := 0
	for k, _ := v.env.Next(lua.LNil); k != lua.LNil; k, _ = v.env.Next(k) {
		if s, ok := k.(lua.LString); !ok || (s != "KEYS" && s != "ARGV") {
			return false
		}
		n++
	}
	return n <= 2
}

// compile parses and compiles a script body as Redis names it
// ("user_script"), or returns Redis's compile error text.
func compile(src string) (*lua.FunctionProto, string) {
	proto, msg := compileChunk(src, "user_script")
	if msg != "" {
		return nil, "ERR Error compiling script (new function): " + sanitize(msg)
	}
	return proto, ""
}

// compileChunk parses and compiles src as a chunk named name (as errors
// show it), rewritten for Lua 5.1's operators (luaops.go), or returns the
// error message.
func compileChunk(src, name string) (*lua.FunctionProto, string) {
	chunk, err := parse.Parse(strings.NewReader(src), name)
	if err != nil {
		msg := err.Error()
		if pe, ok := err.(*parse.Error); ok {
			if pe.Pos.Line == parse.EOF {
				msg = name + ": " + pe.Message + " near '<eof>'"
			} else {
				msg = name + ":" + strconv.Itoa(pe.Pos.Line) + ": " + pe.Message + " near '" + pe.Token + "'"
			}
		}
		return nil, strings.TrimSpace(msg)
	}
	chunk = rewriteOps(chunk)
	proto, err := lua.Compile(chunk, name)
	if err != nil {
		return nil, strings.TrimSpace(err.Error())
	}
	// A chunk is a vararg function; one that does not use "..." would get
	// Lua 5.0's "arg" table, built on every call. Chunks get no arguments
	// that way (KEYS and ARGV are globals), so skip it.
	proto.IsVarArg &^= lua.VarArgNeedsArg
	return proto, ""
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

// sha1hex returns the lower-case hex SHA1 of s, as Redis names scripts.
func sha1hex(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// scriptRun is the context of one script execution.
type scriptRun struct {
	s        *Server
	c        *conn
	db       int
	st       store
	txs      *txSet
	sha      string
	readOnly bool // EVAL_RO, EVALSHA_RO
	resp     int  // the protocol redis.call replies are converted from (setresp)
	x        call // reused for redis.call
	rep      luaReplier
	argv     [][]byte
}

// execute runs the script's function on v inside the atomic section the
// caller holds, writing its result (or error) to w.
func (v *vm) execute(fn *lua.LFunction, run *scriptRun, keys, argv [][]byte, w replier) {
	L := v.L
	v.run = run
	defer func() {
		v.run = nil
		clear(v.chunks)
	}()
	// One string holds every key and argument; the Lua strings share it.
	n := 0
	for _, a := range keys {
		n += len(a)
	}
	for _, a := range argv {
		n += len(a)
	}
	buf := make([]byte, 0, n)
	for _, a := range keys {
		buf = append(buf, a...)
	}
	for _, a := range argv {
		buf = append(buf, a...)
	}
	all := unsafe.String(unsafe.SliceData(buf), len(buf)) // buf is never written again
	kt := L.CreateTable(len(keys), 0)
	off := 0
	for i, k := range keys {
		kt.RawSetInt(i+1, lua.LString(all[off:off+len(k)]))
		off += len(k)
	}
	at := L.CreateTable(len(argv), 0)
	for i, a := range argv {
		at.RawSetInt(i+1, lua.LString(all[off:off+len(a)]))
		off += len(a)
	}
	v.env.RawSetString("KEYS", kt)
	v.env.RawSetString("ARGV", at)
	fn.Env = v.env

	limit := scriptTimeout
	if run.s.scriptLimit != 0 {
		limit = run.s.scriptLimit
	}
	memory := uint64(scriptMemory)
	if run.s.scriptMemory != 0 {
		memory = run.s.scriptMemory
	}
	v.dog.start(v.cancel, limit, memory)
	L.Push(fn)
	err := L.PCall(0, 1, v.handle)
	if ae, ok := err.(*lua.ApiError); ok && ae.Type == lua.ApiErrorPanic {
		// Go code of the runtime panicked; the interpreter recovered it.
		run.s.recordPanic("eval", ae.Object.String(), []byte(ae.StackTrace))
		run.c.quit = true
	}
	reason := v.dog.end()
	v.killed = reason != notKilled
	if v.threads && !v.killed {
		v.newContext()
	}
	switch reason {
	case killedTime:
		err = &lua.ApiError{Object: errTable(L, "ERR Script killed after running for "+limit.String())}
	case killedMemory:
		err = &lua.ApiError{Object: errTable(L, fmt.Sprintf(
			"ERR Script killed: it grew the heap by more than %d MB", memory>>20))}
	}
	if err != nil {
		writeLuaError(w, err, run.sha)
		return
	}
	ret := L.Get(-1)
	L.Pop(1)
	if luaReplySize(ret, 0, run.s.maxBulk()) < 0 {
		w.errorReply("ERR nxkv: script reply too large (past proto-max-bulk-len)")
		return
	}
	writeLua(w, ret, run.resp, 0)
}

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

// errTable returns {err=msg}.
func errTable(L *lua.LState, msg string) *lua.LTable {
	t := L.CreateTable(0, 1)
	t.RawSetString("err", lua.LString(msg))
	return t
}

// errorHandler is Redis's error handler: a string error becomes {err="ERR
// <msg>"}, and the error gets the source and line of the Lua code that
// raised it.
func (v *vm) errorHandler(L *lua.LState) int {
	e := L.Get(1)
	t, ok := e.(*lua.LTable)
	if !ok {
		t = errTable(L, "ERR "+lua.LVAsString(luaToString(e)))
	}
	for level := 1; ; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			break
		}
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err != nil || dbg.What == "G" {
			continue
		}
		src := "@" + dbg.Source // Redis's own name for a script, "@user_script"
		if name, ok := v.chunks[dbg.Source]; ok {
			src = name // a chunk from loadstring, by the name it was given
		}
		t.RawSetString("source", lua.LString(src))
		t.RawSetString("line", lua.LNumber(dbg.CurrentLine))
		break
	}
	L.Push(t)
	return 1
}

// luaToString is Lua's tostring for error values (nil prints "nil").
func luaToString(v lua.LValue) lua.LValue {
	switch v := v.(type) {
	case lua.LString:
		return v
	case lua.LNumber:
		return lua.LString(formatLuaNumber(float64(v)))
	default:
		return lua.LString(v.String())
	}
}

// writeLuaError replies a script's runtime error as Redis: "<err> script:
// <sha>, on @user_script:<line>.".
func writeLuaError(w replier, err error, sha string) {
	var obj lua.LValue = lua.LNil
	if ae, ok := err.(*lua.ApiError); ok {
		obj = ae.Object
	}
	t, ok := obj.(*lua.LTable)
	if !ok {
		w.errorReply("ERR Error running script " + sha + ", " + truncate(sanitize(lua.LVAsString(luaToString(obj))), 100))
		return
	}
	msg := cString(lua.LVAsString(t.RawGetString("err"))) // Redis reads it as a C string
	src, line := t.RawGetString("source"), t.RawGetString("line")
	msg = strings.TrimLeft(msg, "-")
	if src != lua.LNil && line != lua.LNil {
		msg += " script: " + sha + ", on " + lua.LVAsString(src) + ":" + lua.LVAsString(luaToString(line)) + "."
	}
	w.errorReply(sanitize(msg))
}

// writeLua converts a script's return value to a reply with Redis's rules:
// strings are bulk strings, numbers integers (truncated), true 1 and false
// nil (RESP2 script replies) or booleans (after redis.setresp(3)), tables
// with err or ok errors and status replies, {double=}, {map=} and {set=}
// their RESP3 types, and other tables arrays up to the first nil.
func writeLua(w replier, v lua.LValue, resp, depth int) {
	switch v := v.(type) {
	case lua.LString:
		w.bulkString(string(v))
	case lua.LNumber:
		w.int(luaInt(float64(v)))
	case lua.LBool:
		switch {
		case resp == 3:
			w.boolean(bool(v))
		case bool(v):
			w.int(1)
		default:
			w.null()
		}
	case *lua.LTable:
		if depth > maxLuaDepth {
			w.errorReply("ERR reached lua stack limit")
			return
		}
		if e, ok := v.RawGetString("err").(lua.LString); ok {
			w.errorReply(sanitize(errorCode(string(e))))
			return
		}
		if s, ok := v.RawGetString("ok").(lua.LString); ok {
			w.simple(sanitize(string(s)))
			return
		}
		if d, ok := v.RawGetString("double").(lua.LNumber); ok {
			w.double(float64(d))
			return
		}
		if m, ok := v.RawGetString("map").(*lua.LTable); ok {
			n := 0
			m.ForEach(func(lua.LValue, lua.LValue) { n++ })
			w.mapHeader(n)
			m.ForEach(func(k, val lua.LValue) {
				writeLua(w, k, resp, depth+1)
				writeLua(w, val, resp, depth+1)
			})
			return
		}
		if s, ok := v.RawGetString("set").(*lua.LTable); ok {
			n := 0
			s.ForEach(func(lua.LValue, lua.LValue) { n++ })
			w.set(n)
			s.ForEach(func(k, _ lua.LValue) { writeLua(w, k, resp, depth+1) })
			return
		}
		n := 0
		for v.RawGetInt(n+1) != lua.LNil {
			n++
		}
		w.array(n)
		for i := 1; i <= n; i++ {
			writeLua(w, v.RawGetInt(i), resp, depth+1)
		}
	default:
		w.null()
	}
}

// errorCode returns an error table's text as sent: a leading '-' is
// dropped, since the reply adds its own.
func errorCode(s string) string { return strings.TrimPrefix(s, "-") }

// luaInt converts a Lua number to an integer reply as Redis's C cast does
// on x86-64: truncation, and the minimum int64 for NaN and out-of-range
// values.
func luaInt(f float64) int64 {
	if math.IsNaN(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(f)
}

// luaArg converts a redis.call argument: strings as they are, numbers as
// Redis 7.0 prints them (C's "%.17g": inf, -inf, nan, -nan); ok is false
// for other types.
func luaArg(v lua.LValue) ([]byte, bool) {
	switch v := v.(type) {
	case lua.LString:
		return unsafe.Slice(unsafe.StringData(string(v)), len(v)), true
	case lua.LNumber:
		return []byte(formatDouble(float64(v))), true
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
			L.Push(lua.LString(sha1hex(L.ToString(1))))
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
	t.RawSetString("REDIS_VERSION", lua.LString(RedisVersion))
	maj, min, patch := 7, 0, 15
	t.RawSetString("REDIS_VERSION_NUM", lua.LNumber(maj<<16|min<<8|patch))
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

// redisCall is redis.call (raise true) and redis.pcall: it runs a command
// inside the script's section and converts its reply; a command error is
// raised by call and returned as {err=...} by pcall.
func (v *vm) redisCall(L *lua.LState, raise bool) int {
	run := v.run
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
	cmd, _ := lookup(args)
	if cmd == nil {
		c := find(commandTable, args[0])
		if c == nil || (c.subs != nil && len(args) > 1 && find(c.subs, args[1]) == nil) {
			return fail("ERR Unknown Redis command called from script")
		}
		return fail("ERR Wrong number of args calling Redis command from script")
	}
	if cmd.flags&noScript != 0 {
		return fail("ERR This Redis command is not allowed from script")
	}
	if run.readOnly && cmd.flags&write != 0 {
		return fail("ERR Write commands are not allowed from read-only scripts.")
	}
	rep := &run.rep
	rep.reset(L, run.resp)
	x := &run.x
	*x = call{s: run.s, c: run.c, w: rep, args: args, db: run.db, st: run.st, cmd: cmd, tx: true, txs: run.txs, lua: run}
	run.s.commands.Add(1)
	if runContained(x) {
		return fail(panicReply(cmd.name))
	}
	out := rep.result()
	if t, ok := out.(*lua.LTable); ok && rep.isErr && raise {
		L.Error(t, 0)
	}
	L.Push(out)
	return 1
}

// luaReplier converts a command's reply to Lua values as Redis does for
// redis.call: integers numbers, bulk strings strings, nil false, status
// {ok=}, errors {err=}, arrays tables; after setresp(3) RESP3 types map to
// {map=}, {set=}, {double=}, booleans and nil.
type luaReplier struct {
	L     *lua.LState
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

var _ replier = (*luaReplier)(nil)

func (r *luaReplier) reset(L *lua.LState, resp int) {
	r.L, r.resp, r.out, r.isErr = L, resp, lua.LNil, false
	r.stack = r.stack[:0]
}

func (r *luaReplier) result() lua.LValue { return r.out }

func (r *luaReplier) resp3() bool { return r.resp == 3 }

// add places a finished value in the enclosing aggregate, or as the result.
func (r *luaReplier) add(v lua.LValue) {
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

func (r *luaReplier) simple(s string) {
	t := r.L.CreateTable(0, 1)
	t.RawSetString("ok", lua.LString(s))
	r.add(t)
}

func (r *luaReplier) errorReply(s string) {
	if len(r.stack) == 0 {
		r.isErr = true
	}
	r.add(errTable(r.L, errFromReply("-"+s)))
}

func (r *luaReplier) int(n int64)         { r.add(lua.LNumber(n)) }
func (r *luaReplier) bulk(b []byte)       { r.add(lua.LString(b)) }
func (r *luaReplier) bulkString(s string) { r.add(lua.LString(s)) }
func (r *luaReplier) verbatim(s string)   { r.add(lua.LString(s)) }
func (r *luaReplier) nullArray()          { r.null() }
func (r *luaReplier) array(n int)         { r.open('*', n) }
func (r *luaReplier) double(f float64)    { r.doubleValue(f) }
func (r *luaReplier) mapHeader(n int)     { r.open('%', n) }
func (r *luaReplier) set(n int)           { r.open('~', n) }
func (r *luaReplier) boolean(b bool)      { r.boolValue(b) }
func (r *luaReplier) null()               { r.nullValue() }

func (r *luaReplier) nullValue() {
	if r.resp == 3 {
		r.add(lua.LNil)
		return
	}
	r.add(lua.LFalse)
}

func (r *luaReplier) boolValue(b bool) {
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

func (r *luaReplier) doubleValue(f float64) {
	if r.resp == 3 {
		t := r.L.CreateTable(0, 1)
		t.RawSetString("double", lua.LNumber(f))
		r.add(t)
		return
	}
	r.add(lua.LString(formatDouble(f)))
}

// open starts an aggregate of n elements: an array table, or in RESP3 a
// {map=} or {set=} table (RESP2 flattens maps into arrays).
func (r *luaReplier) open(kind byte, n int) {
	if r.resp != 3 && kind == '%' {
		kind, n = '*', 2*n
	}
	if r.resp != 3 && kind == '~' {
		kind = '*'
	}
	t := r.L.CreateTable(0, 0)
	agg := luaAgg{t: t, left: n, kind: kind, inner: t}
	switch kind {
	case '%':
		agg.inner = r.L.NewTable()
		t.RawSetString("map", agg.inner)
	case '~':
		agg.inner = r.L.NewTable()
		t.RawSetString("set", agg.inner)
	}
	if n == 0 {
		r.add(t)
		return
	}
	r.stack = append(r.stack, agg)
}
