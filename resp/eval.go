package resp

// This file is the server's side of scripting, as Redis's eval.c: EVAL,
// EVALSHA, their read-only forms and SCRIPT, the cache of scripts by SHA1
// with their shebang flags, the atomic section a script runs in, and the
// bridge through which its redis.call reaches the command table. The Lua
// runtime itself is package lua (internal/lua), which knows nothing of the
// server but the Caller it is given.

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nxkv/nxkv/resp/internal/lua"
)

// script is a cached script: its source and compiled body, and what the
// server must know to run it.
type script struct {
	sha string
	src string
	fn  *lua.Function
	// allDBs is set when the body may reach other databases (it names
	// SELECT, MOVE, COPY, FLUSHALL or INFO): it then runs with every
	// database locked.
	allDBs bool
	// flagged is set when the script declares its flags in a shebang line;
	// noWrites is its no-writes flag: the script runs as with EVAL_RO.
	// EVAL_RO refuses a flagged script without it. allowOOM is its
	// allow-oom flag: it may write over maxmemory.
	flagged, noWrites, allowOOM bool
}

// scriptFlagSet is what a script's shebang line declares that the server
// acts on.
type scriptFlagSet struct {
	flagged, noWrites, allowOOM bool
}

// scriptFlags are the flags a script's shebang line may declare (Redis
// 7's); no-writes and allow-oom change what nxkv does, the others concern
// replicas and clusters.
var scriptFlags = []string{"no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys"}

// shebang reads src's "#!lua flags=..." first line, if it has one, as
// Redis does: it returns the body to compile (from the line's end, whose
// line feed keeps the line numbers) and the flags the server acts on, or
// Redis's error for a malformed line; fl.flagged reports that it had the
// line.
func shebang(src string) (body string, fl scriptFlagSet, msg string) {
	if !strings.HasPrefix(src, "#!") {
		return src, fl, ""
	}
	end := strings.IndexByte(src, '\n')
	if end < 0 {
		return "", fl, "ERR Invalid script shebang"
	}
	parts, _, ok := splitArgs([]byte(src[:end]), nil, nil)
	if !ok || len(parts) == 0 {
		return "", fl, "ERR Invalid engine in script shebang"
	}
	if string(parts[0]) != "#!lua" {
		return "", fl, "ERR Unexpected engine in script shebang: " + sanitize(string(parts[0]))
	}
	for _, p := range parts[1:] {
		opt, ok := strings.CutPrefix(string(p), "flags=")
		if !ok {
			return "", fl, "ERR Unknown lua shebang option: " + sanitize(string(p))
		}
		if opt == "" {
			continue
		}
		for _, f := range strings.Split(opt, ",") {
			if !slices.Contains(scriptFlags, f) {
				return "", fl, "ERR Unexpected flag in script shebang: " + sanitize(f)
			}
			fl.noWrites = fl.noWrites || f == "no-writes"
			fl.allowOOM = fl.allowOOM || f == "allow-oom"
		}
	}
	fl.flagged = true
	return src[end:], fl, ""
}

// scriptCache holds the scripts by SHA1 and the runtime that runs them.
type scriptCache struct {
	mu sync.RWMutex
	m  map[string]*script // guarded by mu
	rt *lua.Runtime
}

func (sc *scriptCache) init(opts lua.Options) {
	sc.m = map[string]*script{}
	sc.rt = lua.New(opts)
}

func (sc *scriptCache) close() { sc.rt.Close() }

func (sc *scriptCache) count() int {
	sc.mu.RLock()
	defer sc.mu.RUnlock()
	return len(sc.m)
}

// lookup returns the script with the given lower-case SHA1, nil if none.
func (sc *scriptCache) lookup(sha string) *script {
	sc.mu.RLock()
	defer sc.mu.RUnlock()
	return sc.m[sha]
}

// lookupBytes is lookup without allocating a string for sha.
func (sc *scriptCache) lookupBytes(sha []byte) *script {
	sc.mu.RLock()
	defer sc.mu.RUnlock()
	return sc.m[string(sha)]
}

// load compiles src (once) and caches it, or returns the error reply.
func (sc *scriptCache) load(src string) (*script, string) {
	sha := lua.SHA1Hex(src)
	if s := sc.lookup(sha); s != nil {
		return s, ""
	}
	body, fl, msg := shebang(src)
	if msg != "" {
		return nil, msg
	}
	fn, err := lua.Compile(body)
	if err != nil {
		return nil, "ERR Error compiling script (new function): " + sanitize(err.Error())
	}
	l := strings.ToLower(body)
	s := &script{sha: sha, src: src, fn: fn, allDBs: mayReachAllDBs(l), flagged: fl.flagged, noWrites: fl.noWrites, allowOOM: fl.allowOOM}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if old := sc.m[sha]; old != nil {
		return old, ""
	}
	sc.m[sha] = s
	return s, ""
}

// flush forgets every script, and the runtime its instances of them.
func (sc *scriptCache) flush() {
	sc.mu.Lock()
	sc.m = map[string]*script{}
	sc.mu.Unlock()
	sc.rt.Flush()
}

// mayReachAllDBs reports whether a script's lower-cased source names a
// command that reaches other databases than the selected one: it then runs
// holding them all. A name built at run time is not seen; the command then
// fails with an error rather than wait for a database its section lacks.
func mayReachAllDBs(l string) bool {
	for _, name := range allDBsCommands() {
		if strings.Contains(l, name) {
			return true
		}
	}
	return false
}

// allDBsCommands returns the names of the commands flagged allDBs.
var allDBsCommands = sync.OnceValue(func() []string {
	var names []string
	for _, n := range commandNames() {
		if commandTable[n].flags&allDBs != 0 {
			names = append(names, n)
		}
	}
	return names
})

// needsAllDBs reports whether a queued command may touch databases other
// than the selected one, so EXEC must lock them all.
func (s *Server) needsAllDBs(cmd *command, args [][]byte) bool {
	if cmd.flags&allDBs != 0 {
		return true
	}
	if !strings.HasPrefix(cmd.name, "eval") || len(args) < 2 {
		return false
	}
	if cmd.name == "eval" || cmd.name == "eval_ro" {
		return mayReachAllDBs(strings.ToLower(string(args[1])))
	}
	sc := s.scripts.lookup(strings.ToLower(string(args[1])))
	return sc != nil && sc.allDBs
}

// cmdEval is EVAL, EVALSHA, EVAL_RO and EVALSHA_RO: the script runs with
// the selected database locked whole (every database if it may reach
// others) and one frozen time, atomic against every other client and every
// direct engine call.
func cmdEval(x *call) {
	if x.s.mon.n.Load() != 0 {
		x.s.feedMonitors(x, false) // before the script's own commands, as Redis
	}
	numkeys, ok := x.intArg(2)
	if !ok {
		return
	}
	if numkeys > int64(len(x.args)-3) {
		x.w.errorReply("ERR Number of keys can't be greater than number of args")
		return
	}
	if numkeys < 0 {
		x.w.errorReply("ERR Number of keys can't be negative")
		return
	}
	var sc *script
	if x.cmd.name == "eval" || x.cmd.name == "eval_ro" {
		var msg string
		if sc, msg = x.s.scripts.load(string(x.args[1])); sc == nil {
			x.w.errorReply(msg)
			return
		}
	} else {
		if sha := x.args[1]; len(sha) == 40 {
			var lower [40]byte
			for i, c := range sha {
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				lower[i] = c
			}
			sc = x.s.scripts.lookupBytes(lower[:])
		}
		if sc == nil {
			x.w.errorReply("NOSCRIPT No matching script. Please use EVAL.")
			return
		}
	}
	if sc.flagged && !sc.noWrites && strings.HasSuffix(x.cmd.name, "_ro") {
		x.w.errorReply("ERR Can not execute a script with write flag using *_ro command.")
		return
	}
	keys := x.args[3 : 3+numkeys]
	argv := x.args[3+numkeys:]
	run := func(st store, txs *txSet) {
		x.s.runScript(x, sc, st, txs, keys, argv)
	}
	if x.tx {
		if sc.allDBs && !x.holdsAllDBs() {
			x.w.errorReply("ERR nxkv: a script that may reach other databases cannot run in this transaction")
			return
		}
		run(x.st, x.txs)
		return
	}
	if x.s.unlockedScripts {
		run(x.s.store(x.db), nil)
		return
	}
	dbs := []int{x.db}
	if sc.allDBs {
		dbs = allDatabases
	}
	x.s.section(x.c, dbs, func(t *txSet) { run(t.get(x.db), t) })
}

// holdsAllDBs reports whether the transaction x runs in holds every
// database.
func (x *call) holdsAllDBs() bool {
	for i := range Databases {
		if x.txs.get(i) == nil {
			return false
		}
	}
	return true
}

// runScript runs sc on the runtime, inside the section the caller holds
// (st, and txs for the databases a section holds).
func (s *Server) runScript(x *call, sc *script, st store, txs *txSet, keys, argv [][]byte) {
	run := scriptRuns.Get().(*scriptRun)
	*run = scriptRun{s: s, c: x.c, db: x.db, st: st, txs: txs, out: x.w, keys: keys,
		readOnly: sc.noWrites || strings.HasSuffix(x.cmd.name, "_ro")}
	run.oom, run.allowOOM = x.c.oom, sc.flagged && sc.allowOOM
	in := lua.Input{SHA: sc.sha, Keys: keys, Argv: argv, Timeout: s.scriptLimit, Memory: s.scriptMemory,
		Watcher: run, BusyAfter: time.Duration(s.busy.after.Load()) * time.Millisecond}
	x.c.inScript = true
	defer func() { x.c.inScript = false }()
	err := s.scripts.rt.Run(sc.fn, in, run, run)
	if run.busied.Load() {
		s.busy.remove(run)
	}
	if err != nil {
		// Go code the script called panicked, and the runtime stopped the
		// script: the panic is the script command's, contained as any
		// command's is (recover.go).
		var stack []byte
		if p, ok := err.(*lua.PanicError); ok {
			stack = []byte(p.Stack)
		}
		p := s.recordPanic(x.cmd.name, err, stack)
		x.w.errorReply(panicReply(p.cmd))
		x.c.quit = true
	}
	*run = scriptRun{}
	scriptRuns.Put(run)
}

// scriptRuns recycles scriptRuns, which would otherwise cost an
// allocation per script call.
var scriptRuns = sync.Pool{New: func() any { return new(scriptRun) }}

// scriptRun is a running script as the server sees it: the client running
// it, the database it has selected (SELECT inside a script changes only
// the script's), and the section it runs in. It is the runtime's Caller,
// its Writer, which writes the script's result to the client, and the
// replier of the commands the script calls.
type scriptRun struct {
	s        *Server
	c        *conn
	db       int
	st       store
	txs      *txSet
	readOnly bool     // EVAL_RO, EVALSHA_RO, or a no-writes script
	out      replier  // the client's, for the script's result
	keys     [][]byte // the keys the script declared
	// oom is set if the server was over maxmemory as the script's command
	// began, allowOOM if the script declares allow-oom, and dirty once it
	// has called a write command (see checkScriptCall).
	oom, allowOOM, dirty bool
	x                    call // reused for redis.call
	// rep is the reply of the command the script is calling, which
	// scriptRun, as that command's replier, writes to.
	rep   *lua.Reply
	fresh int // error replies to the script since the last takeErrors

	wrote  atomic.Bool // the script has called a write command (SCRIPT KILL refuses)
	busied atomic.Bool // the script ran past busy-reply-threshold: it is in s.busy
	kill   atomic.Bool // SCRIPT KILL asked the script to stop
}

// Busy is lua.Watcher's: the script has run past busy-reply-threshold,
// and until it ends the server answers BUSY to other clients.
func (run *scriptRun) Busy() {
	run.busied.Store(true)
	run.s.busy.add(run)
	if f := run.c.handOff; f != nil {
		f() // the script runs on an event loop: free the loop's other clients
	}
}

// Killed is lua.Watcher's: SCRIPT KILL has asked the script to stop.
func (run *scriptRun) Killed() bool { return run.kill.Load() }

// defaultBusyAfter is busy-reply-threshold's default, in milliseconds.
const defaultBusyAfter = 5000

// busyScripts is Redis's busy state: the scripts running past
// busy-reply-threshold (lua-time-limit). While there is one, the server
// answers BUSY to every command but those Redis allows then (SCRIPT KILL,
// MULTI, DISCARD, WATCH, AUTH, HELLO, ...): in Redis the script holds the
// whole server, and here it holds its databases' locks. SCRIPT KILL stops
// those that have not written. A script is stopped after five seconds in
// any case.
type busyScripts struct {
	after atomic.Int64 // busy-reply-threshold in ms; CONFIG SET changes it
	n     atomic.Int32 // len(runs), read by every command's dispatch

	mu   sync.Mutex
	runs map[*scriptRun]struct{} // guarded by mu
}

func (b *busyScripts) add(run *scriptRun) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.runs == nil {
		b.runs = map[*scriptRun]struct{}{}
	}
	b.runs[run] = struct{}{}
	b.n.Store(int32(len(b.runs)))
}

func (b *busyScripts) remove(run *scriptRun) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.runs, run)
	b.n.Store(int32(len(b.runs)))
}

// kill stops the busy scripts that have not written, as Redis's
// scriptKill, and returns the reply: OK, or NOTBUSY when no script is
// busy, or UNKILLABLE when every busy one has written.
func (b *busyScripts) kill() (errMsg string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.runs) == 0 {
		return "NOTBUSY No scripts in execution right now."
	}
	killed := 0
	for run := range b.runs {
		if !run.wrote.Load() {
			run.kill.Store(true)
			killed++
		}
	}
	if killed == 0 {
		return "UNKILLABLE Sorry the script already executed write commands against the dataset. " +
			"You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."
	}
	return ""
}

var (
	_ lua.Caller = (*scriptRun)(nil)
	_ lua.Writer = (*scriptRun)(nil)
	_ replier    = (*scriptRun)(nil)
)

// Call runs a command for redis.call or redis.pcall inside the script's
// section, with Redis's checks and errors for a command the script may not
// run (which count as rejected calls of it).
func (run *scriptRun) Call(args [][]byte, r *lua.Reply) {
	run.rep = r
	cmd, msg := lookup(args)
	switch {
	case cmd == nil:
		run.errorReply("ERR Unknown Redis command called from script")
		return
	case msg != "":
		msg = "ERR Wrong number of args calling Redis command from script"
	case cmd.flags&noScript != 0:
		msg = "ERR This Redis command is not allowed from script"
	case run.readOnly && cmd.flags&write != 0:
		msg = "ERR Write commands are not allowed from read-only scripts."
	default:
		msg = run.checkScriptCall(cmd)
	}
	if msg != "" {
		run.s.stats(cmd).rejected.Add(1)
		run.errorReply(msg)
		return
	}
	if cmd.flags&write != 0 {
		run.wrote.Store(true)
	}
	x := &run.x
	*x = call{s: run.s, c: run.c, w: run, args: args, db: run.db, st: run.st, cmd: cmd, tx: true, txs: run.txs, lua: run}
	run.s.commands.Add(1)
	if runContained(x) {
		r.Reset()
		run.errorReply(panicReply(cmd.name))
		return
	}
	run.s.called(x, true)
}

// A command a script calls replies to the runtime, which makes the reply a
// Lua value.

func (run *scriptRun) simple(s string) { run.rep.Simple(s) }
func (run *scriptRun) errorReply(s string) {
	run.fresh++
	run.s.errs.count(s) // counted here, as Redis counts a called command's error
	run.rep.Error(s)
}
func (run *scriptRun) countedErrorReply(s string) { run.errorReply(s) }
func (run *scriptRun) int(n int64)                { run.rep.Int(n) }
func (run *scriptRun) bulk(b []byte)              { run.rep.Bulk(b) }
func (run *scriptRun) bulkString(s string)        { run.rep.BulkString(s) }
func (run *scriptRun) null()                      { run.rep.Null() }
func (run *scriptRun) nullArray()                 { run.rep.NullArray() }
func (run *scriptRun) array(n int)                { run.rep.Array(n) }
func (run *scriptRun) mapHeader(n int)            { run.rep.Map(n) }
func (run *scriptRun) set(n int)                  { run.rep.Set(n) }
func (run *scriptRun) double(f float64)           { run.rep.Double(f) }
func (run *scriptRun) boolean(b bool)             { run.rep.Bool(b) }
func (run *scriptRun) verbatim(s string)          { run.rep.Verbatim(s) }
func (run *scriptRun) resp3() bool                { return run.rep.RESP3() }
func (run *scriptRun) takeErrors() int {
	n := run.fresh
	run.fresh = 0
	return n
}

// The script's result, converted by the runtime, goes to the client.

func (run *scriptRun) Simple(s string)       { run.out.simple(s) }
func (run *scriptRun) Error(s string)        { run.out.errorReply(s) }
func (run *scriptRun) CountedError(s string) { run.out.countedErrorReply(s) }
func (run *scriptRun) Int(n int64)           { run.out.int(n) }
func (run *scriptRun) BulkString(s string)   { run.out.bulkString(s) }
func (run *scriptRun) Null()                 { run.out.null() }
func (run *scriptRun) Bool(b bool)           { run.out.boolean(b) }
func (run *scriptRun) Double(f float64)      { run.out.double(f) }
func (run *scriptRun) Array(n int)           { run.out.array(n) }
func (run *scriptRun) Map(n int)             { run.out.mapHeader(n) }
func (run *scriptRun) Set(n int)             { run.out.set(n) }

func cmdScriptLoad(x *call) {
	sc, msg := x.s.scripts.load(string(x.args[2]))
	if sc == nil {
		x.w.errorReply(msg)
		return
	}
	x.w.bulkString(sc.sha)
}

func cmdScriptExists(x *call) {
	x.w.array(len(x.args) - 2)
	for _, a := range x.args[2:] {
		if sc := x.s.scripts.lookup(strings.ToLower(string(a))); sc != nil {
			x.w.int(1)
		} else {
			x.w.int(0)
		}
	}
}

func cmdScriptFlush(x *call) {
	if len(x.args) > 3 || (len(x.args) == 3 && !equalFold(x.args[2], "sync") && !equalFold(x.args[2], "async")) {
		x.w.errorReply("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
		return
	}
	x.s.scripts.flush()
	x.w.simple("OK")
}

func cmdScriptKill(x *call) {
	if msg := x.s.busy.kill(); msg != "" {
		x.w.errorReply(msg)
		return
	}
	x.w.simple("OK")
}
