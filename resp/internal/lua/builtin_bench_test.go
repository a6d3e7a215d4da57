package lua

import (
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// BenchmarkContain is the cost of the recover every builtin is wrapped in
// (builtin.go): a call of a Go function that does nothing, directly and
// through its wrapper.
//
//	go test -run='^$' -bench='^BenchmarkContain$' -count=6 ./resp/internal/lua/
func BenchmarkContain(b *testing.B) {
	L := lua.NewState()
	defer L.Close()
	v := &vm{L: L}
	noop := func(L *lua.LState) int { return 0 }
	for _, tc := range []struct {
		name string
		fn   lua.LGFunction
	}{{"direct", noop}, {"wrapped", v.contain("noop", noop)}} {
		b.Run(tc.name, func(b *testing.B) {
			n := 0
			for b.Loop() {
				n += tc.fn(L)
			}
			if n != 0 {
				b.Fatal(n)
			}
		})
	}
}
