package lua

// This file holds the Runtime: compiled functions, the pool of
// interpreters that run them, one run from KEYS and ARGV to the reply, and
// the error handler and error replies worded as Redis's.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// scriptTimeout is how long a script may run before it is stopped with an
// error. Redis lets a long script run, answering BUSY to everyone else,
// until SCRIPT KILL or SHUTDOWN NOSAVE; a script here holds the engine's
// locks, so it is stopped in any case.
const scriptTimeout = 5 * time.Second

// defaultMaxBulk is Redis's default proto-max-bulk-len, 512 MB.
const defaultMaxBulk = 512 << 20

// maxLuaDepth bounds the nesting of tables converted to replies, as
// Redis's Lua stack limit does.
const maxLuaDepth = 1000

// maxLuaResults is Lua 5.1's C stack limit (LUAI_MAXCSTACK), past which
// unpack and string.byte refuse to return that many values.
const maxLuaResults = 8000

// maxCoroutineNesting is Lua 5.1's LUAI_MAXCCALLS: coroutines resumed
// inside one another past it fail with "C stack overflow".
const maxCoroutineNesting = 200

// Options configures a Runtime. The zero value selects every default.
type Options struct {
	// MaxBulk is the longest string a script may build or return, as
	// Redis's proto-max-bulk-len bounds them; 0 selects 512 MB.
	MaxBulk int
	// Version is the Redis version scripts see as redis.REDIS_VERSION
	// ("7.0.15"); its numbers make REDIS_VERSION_NUM.
	Version string
}

// Runtime runs scripts on a pool of interpreters set up as Redis 7's. Its
// methods are safe for concurrent use; Close releases the interpreters.
// All its scripts share one math.random generator, as in Redis.
type Runtime struct {
	maxBulk    int
	version    string
	versionNum int
	rand       lcg
	vms        vmPool
	// gen is bumped by Flush; an interpreter whose functions belong to an
	// older generation drops them when next taken from the pool.
	gen atomic.Uint64
	// planted holds the globals PlantPanic adds to new interpreters: name
	// to the value each panics with.
	planted sync.Map
	// cjson is the global cjson table's configuration, which every script
	// shares until Flush (cjson.go).
	cjson cjsonState
}

// maxArrayIndex is the largest integer key gopher-lua keeps in a table's
// array part. gopher-lua fills the array part up to a key with nils, so
// with its default (2^26) one assignment, t[60000000] = 1, allocated a
// gigabyte in one instruction, beyond the reach of the memory watchdog;
// Lua 5.1 puts such a key in the hash part. Past this index keys go to
// the hash part here too, at 16 bytes a slot (16 MB at most per table
// filled this way). gopher-lua's setting is process-wide: importing this
// package lowers it for every gopher-lua interpreter of the process, which
// changes no result, only where large keys are kept.
const maxArrayIndex = 1 << 20

func init() { lua.MaxArrayIndex = maxArrayIndex }

// New returns a Runtime with opts.
func New(opts Options) *Runtime {
	rt := &Runtime{maxBulk: opts.MaxBulk, version: opts.Version}
	if rt.maxBulk <= 0 {
		rt.maxBulk = defaultMaxBulk
	}
	rt.versionNum = versionNum(opts.Version)
	rt.rand.x = lcgStart
	rt.cjson.cfg = defaultCJSON
	return rt
}

// versionNum is Redis's REDIS_VERSION_NUM of "major.minor.patch":
// 0x00MMmmpp.
func versionNum(v string) int {
	n := 0
	for i, part := range strings.SplitN(v, ".", 3) {
		d, _ := strconv.Atoi(part)
		n |= (d & 0xff) << (16 - 8*i)
	}
	return n
}

// Close releases the idle interpreters. A script running during Close
// releases its own when it ends.
func (rt *Runtime) Close() { rt.vms.close() }

// Flush makes every interpreter forget the functions it instantiated, as
// SCRIPT FLUSH forgets the scripts: their memory is released as each
// interpreter is next used. cjson's configuration returns to its defaults,
// as Redis's does with its new interpreter.
func (rt *Runtime) Flush() {
	rt.gen.Add(1)
	rt.cjson.reset()
}

// Function is a compiled script body. It is immutable and shared by every
// interpreter, each of which instantiates it once.
type Function struct {
	proto *lua.FunctionProto
}

// Compile compiles a script body as Redis names it in errors
// ("user_script"), with Lua 5.1's operators. The error is the compiler's
// message ("user_script:1: ... near 'x'"), which Redis's reply quotes.
func Compile(body string) (*Function, error) {
	proto, msg := compileChunk(body, "user_script")
	if msg != "" {
		return nil, errors.New(msg)
	}
	return &Function{proto: proto}, nil
}

// compileChunk parses and compiles src as a chunk named name (as errors
// show it), rewritten for Lua 5.1's operators (ops.go), or returns the
// error message.
func compileChunk(src, name string) (*lua.FunctionProto, string) {
	chunk, err := parse.Parse(strings.NewReader(src), name)
	if err != nil {
		msg := err.Error()
		if pe, ok := err.(*parse.Error); ok {
			if pe.Message == "Invalid token" && len(pe.Token) == 1 && strings.TrimLeft(src, " \t\r\n\v\f")[0] == pe.Token[0] {
				// A byte no token starts with, first in the chunk (a
				// binary chunk's ESC): Lua reads it as a symbol of its
				// own, which cannot start a statement.
				pe.Message, pe.Token = "unexpected symbol", luaTokenText(pe.Token[0])
			}
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

// luaTokenText is how Lua 5.1's lexer shows a single-byte token in a
// message: control characters as char(N).
func luaTokenText(c byte) string {
	if c < 32 || c == 127 {
		return "char(" + strconv.Itoa(int(c)) + ")"
	}
	return string(c)
}

// Caller runs the commands a script calls with redis.call and redis.pcall.
type Caller interface {
	// Call runs the command args inside the script's atomic section and
	// writes its reply to r; a command the script may not run (unknown,
	// wrong arity, refused in scripts, a write in a read-only script) gets
	// its error reply. args is valid only during the call.
	Call(args [][]byte, r *Reply)
}

// Writer receives a script's result, converted to a reply with Redis's
// rules, or its error. The methods are those of a reply: Error's text
// starts with an error code ("ERR ..."); Map and Set announce n elements
// (pairs for a map) that follow; Double, Bool, Map and Set are RESP3
// types, which the writer sends in RESP2's shapes to a RESP2 client.
type Writer interface {
	Simple(s string)
	Error(s string)
	// CountedError is an error reply the server counted already, when the
	// command a script called replied it (the error table carries
	// ignore_error_stats_update, as Redis's does): INFO errorstats counts
	// it once.
	CountedError(s string)
	Int(n int64)
	BulkString(s string)
	Null()
	Bool(b bool)
	Double(f float64)
	Array(n int)
	Map(n int)
	Set(n int)
}

// Input is what one run of a script gets.
type Input struct {
	// SHA names the script in error replies: its SHA1 in hex.
	SHA string
	// Keys and Argv become the globals KEYS and ARGV.
	Keys, Argv [][]byte
	// Timeout stops the script with an error once it has run that long;
	// 0 selects five seconds.
	Timeout time.Duration
	// Memory stops the script with an error once it has grown the process
	// heap by that many bytes; 0 selects 1 GiB.
	Memory uint64
	// Watcher, if not nil, is told when the script has run BusyAfter
	// (Redis's busy-reply-threshold) and may then stop it.
	Watcher   Watcher
	BusyAfter time.Duration
}

// Watcher is told of a script that runs long, and may stop it, as Redis's
// SCRIPT KILL does. Its methods are called from the runtime's watchdog
// goroutine while the script runs, never after Run returns. Busy time is
// checked every millisecond once a script has run 10 ms, so a script is
// busy at the earliest 10 ms into its run.
type Watcher interface {
	// Busy is called once, when the script has run Input.BusyAfter.
	Busy()
	// Killed reports whether the script is to stop; it is polled every
	// millisecond after Busy. A killed script ends with Redis's error,
	// which pcall cannot catch.
	Killed() bool
}

// Run runs fn with in's KEYS and ARGV on an interpreter from the pool,
// sending each redis.call and redis.pcall to c, and writes the script's
// result or error to w. It returns when the script has ended; the caller
// holds whatever atomic section the script's commands need. The error is
// nil, or a *PanicError when Go code the script called panicked: the
// script was stopped there, and nothing was written to w (the caller
// replies).
func (rt *Runtime) Run(fn *Function, in Input, c Caller, w Writer) error {
	v := rt.vms.get(rt)
	if gen := rt.gen.Load(); v.gen != gen {
		clear(v.fns)
		v.gen = gen
	}
	f := v.fns[fn]
	if f == nil {
		f = v.L.NewFunctionFromProto(fn.proto)
		v.fns[fn] = f
	}
	r := &v.runBuf
	*r = run{caller: c, sha: in.SHA, resp: 2, argv: r.argv[:0], rep: Reply{stack: r.rep.stack[:0]}}
	err := v.execute(f, r, in, w)
	if v.killed || !v.clean() {
		v.close() // killed, or the script changed shared tables
		return err
	}
	rt.vms.put(v)
	return err
}

// run is the state of one script's run.
type run struct {
	caller Caller
	sha    string
	resp   int // the protocol redis.call replies are converted from (setresp)
	rep    Reply
	argv   [][]byte
	// panic is the first panic of a builtin during the run: the script
	// has been stopped (builtin.go).
	panic *PanicError
}

// vm is one Lua interpreter with the functions it has instantiated. It is
// used by one script at a time (taken from and returned to the pool).
type vm struct {
	rt  *Runtime
	L   *lua.LState
	env *lua.LTable // the read-only global table scripts see
	// typeMTs are the metatables of strings and of nil, booleans and
	// numbers, by a value that has each ("''", "nil").
	typeMTs map[string]*lua.LTable
	// proxied maps each read-only proxy of a library or metatable to the
	// table it reads through to; each is checked after a run to be still
	// empty (readonly.go).
	proxied map[*lua.LTable]*lua.LTable
	// globalsMT and stringMT are the proxies getmetatable shows of the
	// metatables of the globals and of strings.
	globalsMT, stringMT *lua.LTable
	fns                 map[*Function]*lua.LFunction
	gen                 uint64 // the Runtime generation fns belongs to
	cancel              context.CancelFunc
	dog                 *watchdog // stops a script past its time or memory limit
	killed              bool      // the last run was stopped by the watchdog
	// threads is set when a run creates a coroutine: gopher-lua gives each
	// one a child of the interpreter's context and releases it only when
	// the coroutine finishes, so the run ends by replacing the context,
	// which releases those left unfinished.
	threads bool
	run     *run           // the script running now
	runBuf  run            // reused for every run
	handle  *lua.LFunction // the error handler
	null    *lua.LUserData // cjson.null
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

// get returns an idle interpreter, or a new one for rt.
func (p *vmPool) get(rt *Runtime) *vm {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		v := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return v
	}
	p.mu.Unlock()
	return rt.newVM()
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

// clean reports whether a run left the shared tables as they were; a state
// that fails is discarded rather than reused.
func (v *vm) clean() bool {
	for p := range v.proxied {
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

// execute runs the script's function on v, writing its result (or error)
// to w; it returns a *PanicError, and writes nothing, if Go code the script
// called panicked.
func (v *vm) execute(fn *lua.LFunction, r *run, in Input, w Writer) error {
	L := v.L
	v.run = r
	defer func() {
		v.run = nil
		r.caller = nil // keep nothing of the server's past the run
		clear(v.chunks)
	}()
	// One string holds every key and argument; the Lua strings share it.
	n := 0
	for _, a := range in.Keys {
		n += len(a)
	}
	for _, a := range in.Argv {
		n += len(a)
	}
	buf := make([]byte, 0, n)
	for _, a := range in.Keys {
		buf = append(buf, a...)
	}
	for _, a := range in.Argv {
		buf = append(buf, a...)
	}
	all := unsafe.String(unsafe.SliceData(buf), len(buf)) // buf is never written again
	kt := L.CreateTable(len(in.Keys), 0)
	off := 0
	for i, k := range in.Keys {
		kt.RawSetInt(i+1, lua.LString(all[off:off+len(k)]))
		off += len(k)
	}
	at := L.CreateTable(len(in.Argv), 0)
	for i, a := range in.Argv {
		at.RawSetInt(i+1, lua.LString(all[off:off+len(a)]))
		off += len(a)
	}
	v.env.RawSetString("KEYS", kt)
	v.env.RawSetString("ARGV", at)
	fn.Env = v.env

	limit := scriptTimeout
	if in.Timeout != 0 {
		limit = in.Timeout
	}
	memory := uint64(scriptMemory)
	if in.Memory != 0 {
		memory = in.Memory
	}
	v.dog.start(v.cancel, limit, memory, in.BusyAfter, in.Watcher)
	L.Push(fn)
	err := L.PCall(0, 1, v.handle)
	reason := v.dog.end()
	v.killed = reason != notKilled || r.panic != nil
	if r.panic != nil {
		return r.panic // the script was stopped where Go code panicked
	}
	if v.threads && !v.killed {
		v.newContext()
	}
	switch reason {
	case killedTime:
		err = &lua.ApiError{Object: errTable(L, "ERR Script killed after running for "+limit.String())}
	case killedMemory:
		err = &lua.ApiError{Object: errTable(L, fmt.Sprintf(
			"ERR Script killed: it grew the heap by more than %d MB", memory>>20))}
	case killedByUser:
		// Redis raises it where the script was: keep the source and line
		// the error handler found.
		t := errTable(L, "ERR Script killed by user with SCRIPT KILL...")
		if ae, ok := err.(*lua.ApiError); ok {
			if h, ok := ae.Object.(*lua.LTable); ok {
				h.RawSetString("err", t.RawGetString("err"))
				t = h
			}
		}
		err = &lua.ApiError{Object: t}
	}
	if err != nil {
		writeLuaError(w, err, r.sha)
		return nil
	}
	ret := L.Get(-1)
	L.Pop(1)
	if luaReplySize(ret, 0, v.rt.maxBulk) < 0 {
		w.Error("ERR nxkv: script reply too large (past proto-max-bulk-len)")
		return nil
	}
	writeLua(w, ret, r.resp, 0)
	return nil
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
	case *lua.LUserData:
		if v.Value == nil {
			return lua.LString(nullUserData)
		}
		return lua.LString(v.String())
	default:
		return lua.LString(v.String())
	}
}

// writeLuaError replies a script's runtime error as Redis: "<err> script:
// <sha>, on @user_script:<line>.".
func writeLuaError(w Writer, err error, sha string) {
	var obj lua.LValue = lua.LNil
	if ae, ok := err.(*lua.ApiError); ok {
		obj = ae.Object
	}
	t, ok := obj.(*lua.LTable)
	if !ok {
		msg := sanitize(lua.LVAsString(luaToString(obj)))
		w.Error("ERR Error running script " + sha + ", " + msg[:min(len(msg), 100)])
		return
	}
	msg := cString(lua.LVAsString(t.RawGetString("err"))) // Redis reads it as a C string
	src, line := t.RawGetString("source"), t.RawGetString("line")
	msg = strings.TrimLeft(msg, "-")
	if src != lua.LNil && line != lua.LNil {
		msg += " script: " + sha + ", on " + lua.LVAsString(src) + ":" + lua.LVAsString(luaToString(line)) + "."
	}
	writeErrorOf(w, t, sanitize(msg))
}

// crlf replaces CR and LF, which would break the protocol, by spaces, as
// Redis does in error and status replies.
var crlf = strings.NewReplacer("\r", " ", "\n", " ")

// sanitize returns s with CR and LF replaced by spaces.
func sanitize(s string) string { return crlf.Replace(s) }
