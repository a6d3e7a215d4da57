package lua

import (
	"reflect"
	"strconv"

	lua "github.com/yuin/gopher-lua"
)

// PlantGreedyLazy makes the pattern quantifier '-' greedy until undo is
// called (a planted bug for the differential pattern test).
func PlantGreedyLazy() (undo func()) {
	plantGreedyLazy = true
	return func() { plantGreedyLazy = false }
}

// UnwrappedBuiltins builds an interpreter of rt and returns the path of
// every Go function reachable from its globals and from the metatables of
// strings and other types that is not wrapped to contain its panics
// (builtin.go). With plant set, one unwrapped function is added to the
// string library first (a planted bug for the check).
func UnwrappedBuiltins(rt *Runtime, plant bool) []string {
	v := rt.newVM()
	defer v.close()
	if plant {
		str := v.env.Metatable.(*lua.LTable).RawGetString("__index").(*lua.LTable).
			RawGetString("string").(*lua.LTable).Metatable.(*lua.LTable).RawGetString("__index").(*lua.LTable)
		str.RawSetString("unwrapped", v.L.NewFunction(func(L *lua.LState) int { return 0 }))
	}
	wrapper := reflect.ValueOf(v.contain("", nil)).Pointer()
	var bad []string
	var check func(name string, f *lua.LFunction)
	check = func(name string, f *lua.LFunction) {
		if !f.IsG {
			return
		}
		if reflect.ValueOf(f.GFunction).Pointer() != wrapper {
			bad = append(bad, name)
		}
		for i, uv := range f.Upvalues {
			if g, ok := uv.Value().(*lua.LFunction); ok {
				check(name+" upvalue "+strconv.Itoa(i+1), g)
			}
		}
	}
	seen := map[*lua.LTable]bool{}
	var walk func(path string, t *lua.LTable)
	walk = func(path string, t *lua.LTable) {
		if seen[t] {
			return
		}
		seen[t] = true
		t.ForEach(func(k, val lua.LValue) {
			name := path + "." + k.String()
			switch val := val.(type) {
			case *lua.LTable:
				walk(name, val)
			case *lua.LFunction:
				check(name, val)
			}
		})
		if mt, ok := t.Metatable.(*lua.LTable); ok {
			walk("getmetatable("+path+")", mt)
		}
	}
	walk("_G", v.env)
	for name, mt := range v.typeMTs {
		walk(name, mt)
	}
	check("the error handler", v.handle)
	return bad
}

// PlantCodecBugs makes cjson leave '/' unescaped and cmsgpack pack every
// fraction as a double until undo is called (planted bugs for the
// differential test of both).
func PlantCodecBugs() (undo func()) {
	plantCodecBugs = true
	return func() { plantCodecBugs = false }
}
