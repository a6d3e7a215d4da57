package lua

// This file contains a panic of the Go code a script calls. Every Go
// function a script can reach (this package's builtins and gopher-lua's
// library functions alike) is wrapped, once the environment is built, in a
// deferred recover. gopher-lua would otherwise turn such a panic into an
// ordinary Lua error, which the script could even catch with pcall, and
// the defect would go unseen. The wrapper records the first panic of a run
// with its stack, stops the script (its context is cancelled, so no Lua
// instruction runs after it, whatever pcall caught) and raises a Lua
// error; Run then reports the panic to its caller, writes no reply, and
// the interpreter is discarded.

import (
	"cmp"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// PanicError reports that Go code called by a script panicked: a defect of
// this package or of gopher-lua. The script was stopped there and wrote no
// reply.
type PanicError struct {
	Func  string // the builtin that panicked, as scripts name it ("string.find")
	Value any    // what it panicked with
	Stack string // the goroutine's stack at the panic
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("lua builtin %s: %v", e.Func, e.Value)
}

// builtinPanicMsg is the Lua error a panicking builtin raises: a pcall
// that catches it gets this text, but the script stops at its next
// instruction.
const builtinPanicMsg = "internal error in a builtin of the server"

// builtin wraps fn, the Go function scripts know as name, so that a panic
// in it stops the script and is reported by Run.
func (v *vm) builtin(name string, fn lua.LGFunction) *lua.LFunction {
	return v.L.NewFunction(v.contain(name, fn))
}

// contain returns fn wrapped in the recover that reports its panics. Lua
// errors, which gopher-lua raises as panics of *lua.ApiError, go on as
// they are. It is not inlined, so that every wrapper runs the same code
// (which the test that finds unwrapped builtins checks).
//
//go:noinline
func (v *vm) contain(name string, fn lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		returned := false
		defer func() {
			if !returned { // recover only on the way out of a panic: it costs
				v.recovered(L, name, recover())
			}
		}()
		n := fn(L)
		returned = true
		return n
	}
}

// recovered handles what a wrapped builtin panicked with: a Lua error
// goes on, anything else stops the script (see the file comment).
func (v *vm) recovered(L *lua.LState, name string, r any) {
	if r == nil {
		return // runtime.Goexit
	}
	if _, ok := r.(*lua.ApiError); ok {
		panic(r)
	}
	run := v.run
	if run == nil {
		panic(r) // not inside a run: nothing to stop or report to
	}
	if run.panic == nil { // the first panic of the run is the one reported
		run.panic = &PanicError{Func: name, Value: r, Stack: string(debug.Stack())}
	}
	v.cancel()
	L.Error(lua.LString(builtinPanicMsg), 0)
}

// wrapBuiltins wraps, in place, every Go function reachable from the
// globals scripts see and from the metatables of strings and other
// non-table types, through tables and their metatables, each under its
// path ("string.find"). A function reached twice gets the same wrapper.
func (v *vm) wrapBuiltins() {
	w := builtinWalk{v: v, seen: map[*lua.LTable]bool{}, wrapped: map[*lua.LFunction]*lua.LFunction{}}
	w.table("", v.env)
	for value, mt := range v.typeMTs {
		w.entries(value, "getmetatable("+value+")", mt)
	}
}

// builtinWalk is the state of wrapBuiltins: the tables it has walked, and
// the wrapper it made of each function.
type builtinWalk struct {
	v       *vm
	seen    map[*lua.LTable]bool
	wrapped map[*lua.LFunction]*lua.LFunction
}

// table walks t, which scripts know by path ("" for the globals); the
// tables a metatable's __index reads through are known by the path of the
// table they serve (the libraries' read-only proxies read through to them).
func (w *builtinWalk) table(path string, t *lua.LTable) {
	w.entries(path, "", t)
}

// entries walks t; its entries are named path.key, or prefix.key when
// prefix is set (for a metatable's).
func (w *builtinWalk) entries(path, prefix string, t *lua.LTable) {
	if w.seen[t] {
		return
	}
	w.seen[t] = true
	var keys []lua.LValue
	t.ForEach(func(k, _ lua.LValue) { keys = append(keys, k) })
	for _, k := range keys {
		key := strings.TrimPrefix(k.String(), "\x00") // the operators' hidden names
		name := key
		switch {
		case prefix != "":
			name = prefix + "." + key
		case path != "":
			name = path + "." + key
		}
		switch val := t.RawGet(k).(type) {
		case *lua.LTable:
			if prefix != "" && key == "__index" {
				w.table(path, val)
			} else {
				w.table(name, val)
			}
		case *lua.LFunction:
			if val.IsG {
				t.RawSet(k, w.function(name, val))
			}
		}
	}
	if mt, ok := t.Metatable.(*lua.LTable); ok {
		w.entries(path, "getmetatable("+cmp.Or(path, "_G")+")", mt)
	}
}

// PlantPanic makes every interpreter a Runtime builds from now on define a
// global function name that panics with value: a planted defect, for the
// tests that show a panic is contained. It returns a function that removes
// it again. Idle interpreters of rt are released, so the next run builds
// one with the function; it is safe for concurrent use.
func (rt *Runtime) PlantPanic(name string, value any) (undo func()) {
	rt.planted.Store(name, value)
	rt.vms.close()
	return func() {
		rt.planted.Delete(name)
		rt.vms.close()
	}
}

// function returns the wrapper of the Go function f, known as name. Its
// upvalues go with it, Go functions among them wrapped in turn: pairs
// returns its upvalue, the iterator, to the script.
func (w *builtinWalk) function(name string, f *lua.LFunction) *lua.LFunction {
	if wf := w.wrapped[f]; wf != nil {
		return wf
	}
	wf := w.v.builtin(name, f.GFunction)
	w.wrapped[f] = wf
	for i, uv := range f.Upvalues {
		if g, ok := uv.Value().(*lua.LFunction); ok && g.IsG {
			uv = &lua.Upvalue{}
			uv.SetValue(w.function(name+"'s function "+strconv.Itoa(i+1), g))
		}
		wf.Upvalues = append(wf.Upvalues, uv)
	}
	return wf
}
