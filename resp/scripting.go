package resp

// This file holds EVAL, EVALSHA, their read-only forms and SCRIPT, and the
// cache of compiled scripts.

import (
	"slices"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"
)

func init() {
	register(
		&command{name: "eval", arity: -3, flags: noScript, fn: cmdEval},
		&command{name: "evalsha", arity: -3, flags: noScript, fn: cmdEval},
		&command{name: "eval_ro", arity: -3, flags: noScript, fn: cmdEval},
		&command{name: "evalsha_ro", arity: -3, flags: noScript, fn: cmdEval},
		&command{name: "script", arity: -2, flags: noScript},
		&command{name: "script|load", arity: 3, flags: noScript, fn: cmdScriptLoad},
		&command{name: "script|exists", arity: -3, flags: noScript, fn: cmdScriptExists},
		&command{name: "script|flush", arity: -2, flags: noScript, fn: cmdScriptFlush},
		&command{name: "script|kill", arity: 2, flags: noScript, fn: cmdScriptKill},
	)
}

// script is a compiled script body. Its proto is shared by every
// interpreter, each of which instantiates it once.
type script struct {
	sha   string
	src   string
	proto *lua.FunctionProto
	// allDBs is set when the body may reach other databases (it names
	// SELECT, MOVE, COPY, FLUSHALL or INFO): it then runs with every
	// database locked.
	allDBs bool
	// flagged is set when the script declares its flags in a shebang line;
	// noWrites is its no-writes flag: the script runs as with EVAL_RO.
	// EVAL_RO refuses a flagged script without it.
	flagged, noWrites bool
}

// scriptFlags are the flags a script's shebang line may declare (Redis
// 7's); only no-writes changes what nxkv does, the others concern
// replicas, memory limits and clusters.
var scriptFlags = []string{"no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys"}

// shebang reads src's "#!lua flags=..." first line, if it has one, as
// Redis does: it returns the body to compile (from the line's end, whose
// line feed keeps the line numbers) and the no-writes flag, or Redis's
// error for a malformed line; flagged reports that it had the line.
func shebang(src string) (body string, flagged, noWrites bool, msg string) {
	if !strings.HasPrefix(src, "#!") {
		return src, false, false, ""
	}
	end := strings.IndexByte(src, '\n')
	if end < 0 {
		return "", false, false, "ERR Invalid script shebang"
	}
	parts, _, ok := splitArgs([]byte(src[:end]), nil, nil)
	if !ok || len(parts) == 0 {
		return "", false, false, "ERR Invalid engine in script shebang"
	}
	if string(parts[0]) != "#!lua" {
		return "", false, false, "ERR Unexpected engine in script shebang: " + sanitize(string(parts[0]))
	}
	for _, p := range parts[1:] {
		opt, ok := strings.CutPrefix(string(p), "flags=")
		if !ok {
			return "", false, false, "ERR Unknown lua shebang option: " + sanitize(string(p))
		}
		if opt == "" {
			continue
		}
		for _, f := range strings.Split(opt, ",") {
			if !slices.Contains(scriptFlags, f) {
				return "", false, false, "ERR Unexpected flag in script shebang: " + sanitize(f)
			}
			noWrites = noWrites || f == "no-writes"
		}
	}
	return src[end:], true, noWrites, ""
}

// scriptCache holds the compiled scripts by SHA1 and the interpreters.
type scriptCache struct {
	mu  sync.RWMutex
	m   map[string]*script // guarded by mu
	gen uint64             // guarded by mu: bumped by SCRIPT FLUSH
	vms vmPool
}

func (sc *scriptCache) init() { sc.m = map[string]*script{} }

func (sc *scriptCache) close() { sc.vms.close() }

func (sc *scriptCache) count() int {
	sc.mu.RLock()
	defer sc.mu.RUnlock()
	return len(sc.m)
}

// lookup returns the script with the given lower-case SHA1 and the cache
// generation.
func (sc *scriptCache) lookup(sha string) (*script, uint64) {
	sc.mu.RLock()
	defer sc.mu.RUnlock()
	return sc.m[sha], sc.gen
}

// lookupBytes is lookup without allocating a string for sha.
func (sc *scriptCache) lookupBytes(sha []byte) (*script, uint64) {
	sc.mu.RLock()
	defer sc.mu.RUnlock()
	return sc.m[string(sha)], sc.gen
}

// load compiles src (once) and caches it, or returns the compile error.
func (sc *scriptCache) load(src string) (*script, uint64, string) {
	sha := sha1hex(src)
	if s, gen := sc.lookup(sha); s != nil {
		return s, gen, ""
	}
	body, flagged, noWrites, msg := shebang(src)
	if msg != "" {
		return nil, 0, msg
	}
	proto, msg := compile(body)
	if proto == nil {
		return nil, 0, msg
	}
	l := strings.ToLower(body)
	s := &script{sha: sha, src: src, proto: proto, allDBs: mayReachAllDBs(l), flagged: flagged, noWrites: noWrites}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if old := sc.m[sha]; old != nil {
		return old, sc.gen, ""
	}
	sc.m[sha] = s
	return s, sc.gen, ""
}

func (sc *scriptCache) flush() {
	sc.mu.Lock()
	sc.m = map[string]*script{}
	sc.gen++
	sc.mu.Unlock()
}

// needsAllDBs reports whether a queued command may touch databases other
// than the selected one, so EXEC must lock them all.
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
	sc, _ := s.scripts.lookup(strings.ToLower(string(args[1])))
	return sc != nil && sc.allDBs
}

// cmdEval is EVAL, EVALSHA, EVAL_RO and EVALSHA_RO: the script runs with
// the selected database locked whole (every database if it may reach
// others) and one frozen time, atomic against every other client and every
// direct engine call.
func cmdEval(x *call) {
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
	var gen uint64
	if x.cmd.name == "eval" || x.cmd.name == "eval_ro" {
		var msg string
		if sc, gen, msg = x.s.scripts.load(string(x.args[1])); sc == nil {
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
			sc, gen = x.s.scripts.lookupBytes(lower[:])
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
		x.s.runScript(x, sc, gen, st, txs, keys, argv)
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
	x.s.section(dbs, func(t *txSet) { run(t.get(x.db), t) })
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

// runScript runs sc on an interpreter from the pool.
func (s *Server) runScript(x *call, sc *script, gen uint64, st store, txs *txSet, keys, argv [][]byte) {
	v := s.scripts.vms.get()
	if v.gen != gen {
		clear(v.fns)
		v.gen = gen
	}
	fn := v.fns[sc.sha]
	if fn == nil {
		fn = v.L.NewFunctionFromProto(sc.proto)
		v.fns[sc.sha] = fn
	}
	run := &v.runBuf
	*run = scriptRun{s: s, c: x.c, db: x.db, st: st, txs: txs, sha: sc.sha, resp: 2,
		readOnly: sc.noWrites || strings.HasSuffix(x.cmd.name, "_ro"), argv: run.argv[:0], rep: luaReplier{stack: run.rep.stack[:0]}}
	v.execute(fn, run, keys, argv, x.w)
	if v.killed || !v.clean() {
		v.close() // killed, or the script changed shared tables
		return
	}
	s.scripts.vms.put(v)
}

func cmdScriptLoad(x *call) {
	sc, _, msg := x.s.scripts.load(string(x.args[2]))
	if sc == nil {
		x.w.errorReply(msg)
		return
	}
	x.w.bulkString(sc.sha)
}

func cmdScriptExists(x *call) {
	x.w.array(len(x.args) - 2)
	for _, a := range x.args[2:] {
		if sc, _ := x.s.scripts.lookup(strings.ToLower(string(a))); sc != nil {
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
	x.w.errorReply("NOTBUSY No scripts in execution right now.")
}
