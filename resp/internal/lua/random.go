package lua

// This file holds math.random and math.randomseed. Redis replaces Lua's
// (which call the C library's rand) with the 48-bit linear congruential
// generator of POSIX lrand48, whose sequence is the same on every system:
// one generator for the Runtime (a server has one), never reset between
// scripts, so a script that seeds it gets the sequence Redis gives for that
// seed, and an unseeded Runtime starts from lrand48's standard initial
// state.

import (
	"math"
	"sync"

	lua "github.com/yuin/gopher-lua"
)

const (
	lcgMul   = 0x5DEECE66D
	lcgAdd   = 0xB
	lcgMask  = 1<<48 - 1
	lcgStart = 0x1234ABCD330E // lrand48's state before any seeding
	// randMax is the bound Redis divides by: INT32_MAX.
	randMax = 1<<31 - 1
)

// lcg is a Runtime's generator. It is safe for concurrent use; New sets
// its state to lcgStart.
type lcg struct {
	mu sync.Mutex
	x  uint64 // the 48-bit state; guarded by mu
}

// next advances the state and returns its top 31 bits, as lrand48.
func (g *lcg) next() uint32 {
	g.mu.Lock()
	g.x = (lcgMul*g.x + lcgAdd) & lcgMask
	r := uint32(g.x >> 17)
	g.mu.Unlock()
	return r
}

// seed sets the state as srand48 does: the seed's 32 bits above 0x330E.
func (g *lcg) seed(s int32) {
	g.mu.Lock()
	g.x = uint64(uint32(s))<<16 | 0x330E
	g.mu.Unlock()
}

// mathRandom is Lua 5.1's math.random over the Runtime's generator: with no
// argument a number in [0, 1), with u one in [1, u], with l and u one in
// [l, u]; an empty interval or a third argument is an error (gopher-lua's
// panicked inside Go's rand for an empty one).
func (v *vm) mathRandom(L *lua.LState) int {
	r := float64(v.rt.rand.next()%randMax) / randMax
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(r))
	case 1:
		u := luaCInt(L, 1, "random")
		if u < 1 {
			luaArgError(L, 1, "random", "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u)) + 1))
	case 2:
		l, u := luaCInt(L, 1, "random"), luaCInt(L, 2, "random")
		if l > u {
			luaArgError(L, 2, "random", "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*(float64(u)-float64(l)+1)) + float64(l)))
	default:
		luaRaise(L, "wrong number of arguments")
	}
	return 1
}

// mathRandomSeed is math.randomseed: it seeds the Runtime's generator with
// its argument as a C int.
func (v *vm) mathRandomSeed(L *lua.LState) int {
	v.rt.rand.seed(luaCInt(L, 1, "randomseed"))
	return 0
}
