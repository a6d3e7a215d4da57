package lua

// This file holds the read-only tables scripts see, as Redis 7 makes the
// globals, the libraries and their metatables read-only. Redis flags the
// tables themselves; gopher-lua cannot, so a script sees an empty proxy of
// each, which reads through to the real table and refuses writes. The
// functions that bypass metatables (rawset, rawget, next, pairs,
// getmetatable, setmetatable) see through the proxies, so that a script
// finds the same keys and the same refusals as in Redis: pairs(string)
// lists the string functions, getmetatable(_G) is a read-only table
// whose __index is the function that refuses undefined globals.

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// readonlyErr is Redis's error for writing to a global or a library.
const readonlyErr = "Attempt to modify a readonly table"

// readonly returns a read-only proxy of t (a library or a metatable),
// which clean checks after each run.
func (v *vm) readonly(t *lua.LTable) *lua.LTable {
	p := readonlyProxy(v.L, t)
	if v.proxied == nil {
		v.proxied = map[*lua.LTable]*lua.LTable{}
	}
	v.proxied[p] = t
	return p
}

// readonlyProxy returns an empty table that reads through to t and refuses
// writes.
func readonlyProxy(L *lua.LState, t *lua.LTable) *lua.LTable {
	p := L.NewTable()
	mt := L.NewTable()
	mt.RawSetString("__index", t)
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(readonlyErr)
		return 0
	}))
	mt.RawSetString("__metatable", lua.LFalse)
	L.SetMetatable(p, mt)
	return p
}

// isReadonly reports whether t is one of the read-only tables scripts see:
// the globals, a library or a metatable getmetatable shows.
func (v *vm) isReadonly(t *lua.LTable) bool {
	_, ok := v.proxied[t]
	return ok || t == v.env
}

// readonlyMetatable returns what getmetatable shows for a read-only table:
// the globals' metatable, seen read-only; nothing for the others, which in
// Redis have none.
func (v *vm) readonlyMetatable(t *lua.LTable) (lua.LValue, bool) {
	switch {
	case t == v.env:
		return v.globalsMT, true
	case v.isReadonly(t):
		return lua.LNil, true
	}
	return nil, false
}

// protectedTableError is the __index of the globals' metatable, Redis's
// luaProtectedTableError: reading an undefined global is an error.
func protectedTableError(L *lua.LState) int {
	if L.GetTop() != 2 {
		luaRaise(L, "Wrong number of arguments to luaProtectedTableError")
	}
	name, ok := toStringArg(L.Get(2))
	if !ok {
		luaRaise(L, "Second argument to luaProtectedTableError must be a string or number")
	}
	luaRaise(L, "Script attempted to access nonexistent global variable '"+cString(name)+"'")
	return 0
}

// hidden reports whether k is a global scripts cannot name (ops.go's), which
// next and rawget on the globals skip.
func hidden(k lua.LValue) bool {
	s, ok := k.(lua.LString)
	return ok && strings.HasPrefix(string(s), "\x00")
}

// seeThrough replaces rawset, rawget, next and pairs in the globals g by
// versions that see through the read-only proxies.
func (v *vm) seeThrough(g *lua.LTable) {
	L := v.L
	next := g.RawGetString("next").(*lua.LFunction)
	rawget := g.RawGetString("rawget").(*lua.LFunction)
	nextFn := func(L *lua.LState) int {
		t, ok := L.Get(1).(*lua.LTable)
		if !ok || !v.isReadonly(t) {
			return next.GFunction(L)
		}
		k, val := v.readonlyNext(g, t, L.Get(2))
		if k == lua.LNil {
			L.Push(lua.LNil)
			return 1
		}
		L.Push(k)
		L.Push(val)
		return 2
	}
	g.RawSetString("next", L.NewFunction(nextFn))
	// pairs returns a next of its own, its upvalue, as Lua 5.1's does.
	g.RawSetString("pairs", L.NewClosure(func(L *lua.LState) int {
		t, ok := L.Get(1).(*lua.LTable)
		if !ok {
			luaArgError(L, 1, "pairs", "table expected, got "+typeName(L, 1))
		}
		L.Push(L.Get(lua.UpvalueIndex(1)))
		L.Push(t)
		L.Push(lua.LNil)
		return 3
	}, L.NewFunction(nextFn)))
	g.RawSetString("rawget", L.NewFunction(func(L *lua.LState) int {
		t, ok := L.Get(1).(*lua.LTable)
		if !ok || !v.isReadonly(t) {
			return rawget.GFunction(L)
		}
		k := L.CheckAny(2)
		val := lua.LNil
		if real := v.proxied[t]; real != nil {
			val = real.RawGet(k)
		} else if val = t.RawGet(k); val == lua.LNil && !hidden(k) { // the globals
			val = g.RawGet(k)
		}
		L.Push(val)
		return 1
	}))
	g.RawSetString("rawset", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		if v.isReadonly(t) {
			L.Error(lua.LString(readonlyErr), 0)
		}
		key := L.CheckAny(2)
		L.RawSet(t, key, L.CheckAny(3))
		L.SetTop(1)
		return 1
	}))
}

// readonlyNext is next for the read-only table t: the entries of the
// table it reads through to; for the globals, their own (KEYS and ARGV)
// and then those of g but the hidden ones.
func (v *vm) readonlyNext(g, t *lua.LTable, k lua.LValue) (lua.LValue, lua.LValue) {
	if real := v.proxied[t]; real != nil {
		return real.Next(k)
	}
	if k == lua.LNil || t.RawGet(k) != lua.LNil {
		if k, val := t.Next(k); k != lua.LNil {
			return k, val
		}
		k = lua.LNil
	}
	k, val := g.Next(k)
	for hidden(k) {
		k, val = g.Next(k)
	}
	return k, val
}
