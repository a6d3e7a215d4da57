package lua

// This file provides Lua's bit library (LuaBitOp), which Redis scripts
// can use: operations on 32-bit integers.

import (
	"fmt"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// toBit converts a Lua number to a 32-bit integer as LuaBitOp does
// (modulo 2^32, rounding to nearest).
func toBit(L *lua.LState, i int) int32 {
	f := float64(L.CheckNumber(i))
	f = math.Mod(math.RoundToEven(f), 4294967296)
	return int32(uint32(int64(f)))
}

func newBitLib(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	fold := func(op func(a, b int32) int32) lua.LGFunction {
		return func(L *lua.LState) int {
			r := toBit(L, 1)
			for i := 2; i <= L.GetTop(); i++ {
				r = op(r, toBit(L, i))
			}
			L.Push(lua.LNumber(r))
			return 1
		}
	}
	shift := func(op func(a int32, n uint) int32) lua.LGFunction {
		return func(L *lua.LState) int {
			L.Push(lua.LNumber(op(toBit(L, 1), uint(toBit(L, 2))&31)))
			return 1
		}
	}
	fns := map[string]lua.LGFunction{
		"tobit":   func(L *lua.LState) int { L.Push(lua.LNumber(toBit(L, 1))); return 1 },
		"bnot":    func(L *lua.LState) int { L.Push(lua.LNumber(^toBit(L, 1))); return 1 },
		"band":    fold(func(a, b int32) int32 { return a & b }),
		"bor":     fold(func(a, b int32) int32 { return a | b }),
		"bxor":    fold(func(a, b int32) int32 { return a ^ b }),
		"lshift":  shift(func(a int32, n uint) int32 { return int32(uint32(a) << n) }),
		"rshift":  shift(func(a int32, n uint) int32 { return int32(uint32(a) >> n) }),
		"arshift": shift(func(a int32, n uint) int32 { return a >> n }),
		"rol":     shift(func(a int32, n uint) int32 { return int32(uint32(a)<<n | uint32(a)>>((32-n)&31)) }),
		"ror":     shift(func(a int32, n uint) int32 { return int32(uint32(a)>>n | uint32(a)<<((32-n)&31)) }),
		"bswap": func(L *lua.LState) int {
			u := uint32(toBit(L, 1))
			L.Push(lua.LNumber(int32(u>>24 | u>>8&0xff00 | u<<8&0xff0000 | u<<24)))
			return 1
		},
		"tohex": func(L *lua.LState) int {
			x := uint32(toBit(L, 1))
			n := 8
			if L.GetTop() >= 2 {
				n = int(toBit(L, 2))
			}
			digits := "%0*x"
			if n < 0 {
				n, digits = -n, "%0*X"
			}
			n = min(n, 8)
			s := fmt.Sprintf(digits, 8, x)
			L.Push(lua.LString(s[8-n:]))
			return 1
		},
	}
	for name, fn := range fns {
		t.RawSetString(name, L.NewFunction(fn))
	}
	return t
}
