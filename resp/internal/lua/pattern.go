package lua

// This file holds Lua 5.1's pattern matching and the string functions built
// on it (string.find, match, gmatch and gsub), written for this package
// rather than taken from gopher-lua, whose matcher cannot be stopped. A
// pattern such as ".-.-.-.-b" backtracks in polynomial time of high degree,
// and it does so inside one Go call, where the script time limit, checked
// between Lua instructions, never runs; gopher-lua's gsub also copies the
// whole string once per match. Here the matcher counts its steps and checks
// the script's context every few thousand of them, recursion is bounded as
// in later Lua releases ("pattern too complex"), and gsub builds its result
// once, up to the bulk-string limit. The algorithm is the classic Lua 5.1
// backtracking matcher, and the semantics are Lua 5.1's, as in Redis: the
// character classes of the C locale, %b, %f, position captures, and a
// pattern's '^' that is an anchor in find, match and gsub but a literal in
// gmatch.

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
)

const (
	// maxCaptures is Lua's LUA_MAXCAPTURES.
	maxCaptures = 32
	// maxMatchDepth bounds the matcher's recursion, as Lua 5.2's
	// MAXCCALLS does; Lua 5.1 recursed until its C stack overflowed.
	maxMatchDepth = 200
	// matchCheckEvery is how many matcher steps pass between two checks of
	// the script's context; a step is a few nanoseconds.
	matchCheckEvery = 1 << 12

	capUnfinished = -1
	capPosition   = -2
)

// patternError is a pattern error the string functions raise as a Lua
// error.
type patternError string

// capture is one capture: its start in the subject and its length, or
// capUnfinished or capPosition.
type capture struct{ init, len int }

// matchState is one pattern function's matcher over subject src and
// pattern pat.
type matchState struct {
	src, pat string
	level    int // captures opened so far
	capture  [maxCaptures]capture
	depth    int             // nested match calls
	steps    int             // steps since the last context check
	done     <-chan struct{} // the script's context: closed when it is stopped
	limit    int             // the most bytes gsub's result may hold
}

// tick counts one step and stops the matcher once the script's context is
// done.
func (ms *matchState) tick() {
	ms.steps++
	if ms.steps < matchCheckEvery {
		return
	}
	ms.steps = 0
	select {
	case <-ms.done:
		panic(patternError("script stopped while matching a pattern"))
	default:
	}
}

// match matches pat[p:] at src[s:] and returns the end of the match, or -1.
func (ms *matchState) match(s, p int) int {
	ms.depth++
	if ms.depth > maxMatchDepth {
		panic(patternError("pattern too complex"))
	}
	r := ms.doMatch(s, p)
	ms.depth--
	return r
}

func (ms *matchState) doMatch(s, p int) int {
	src, pat := ms.src, ms.pat
	for {
		ms.tick()
		if p == len(pat) {
			return s
		}
		switch pat[p] {
		case '(':
			if p+1 < len(pat) && pat[p+1] == ')' {
				return ms.startCapture(s, p+2, capPosition)
			}
			return ms.startCapture(s, p+1, capUnfinished)
		case ')':
			return ms.endCapture(s, p+1)
		case '$':
			if p+1 == len(pat) {
				if s == len(src) {
					return s
				}
				return -1
			}
		case '%':
			if p+1 < len(pat) {
				switch c := pat[p+1]; {
				case c == 'b':
					if s = ms.matchBalance(s, p+2); s == -1 {
						return -1
					}
					p += 4
					continue
				case c == 'f':
					p += 2
					if p >= len(pat) || pat[p] != '[' {
						panic(patternError("missing '[' after '%f' in pattern"))
					}
					ep := ms.classEnd(p)
					var prev, cur byte
					if s > 0 {
						prev = src[s-1]
					}
					if s < len(src) {
						cur = src[s]
					}
					if ms.matchBracket(prev, p, ep-1) || !ms.matchBracket(cur, p, ep-1) {
						return -1
					}
					p = ep
					continue
				case isDigit(c):
					if s = ms.matchCapture(s, c); s == -1 {
						return -1
					}
					p += 2
					continue
				}
			}
		}
		// A single-character class, perhaps with a quantifier.
		ep := ms.classEnd(p)
		m := s < len(src) && ms.singleMatch(src[s], p, ep)
		if ep < len(pat) {
			switch pat[ep] {
			case '?':
				if m {
					if r := ms.match(s+1, ep+1); r != -1 {
						return r
					}
				}
				p = ep + 1
				continue
			case '*':
				return ms.maxExpand(s, p, ep)
			case '+':
				if !m {
					return -1
				}
				return ms.maxExpand(s+1, p, ep)
			case '-':
				return ms.minExpand(s, p, ep)
			}
		}
		if !m {
			return -1
		}
		s++
		p = ep
	}
}

// classEnd returns the end of the single-character class at pat[p].
func (ms *matchState) classEnd(p int) int {
	pat := ms.pat
	c := pat[p]
	p++
	switch c {
	case '%':
		if p >= len(pat) {
			panic(patternError("malformed pattern (ends with '%')"))
		}
		return p + 1
	case '[':
		if p < len(pat) && pat[p] == '^' {
			p++
		}
		for { // the first character may be ']' itself
			if p >= len(pat) {
				panic(patternError("malformed pattern (missing ']')"))
			}
			c := pat[p]
			p++
			if c == '%' && p < len(pat) {
				p++ // an escape such as %]
			}
			if p < len(pat) && pat[p] == ']' {
				return p + 1
			}
		}
	}
	return p
}

// singleMatch reports whether c matches the class pat[p:ep].
func (ms *matchState) singleMatch(c byte, p, ep int) bool {
	switch ms.pat[p] {
	case '.':
		return true
	case '%':
		return matchClass(c, ms.pat[p+1])
	case '[':
		return ms.matchBracket(c, p, ep-1)
	}
	return ms.pat[p] == c
}

// matchBracket reports whether c matches the set pat[p:ec+1], from its '['
// to its ']'.
func (ms *matchState) matchBracket(c byte, p, ec int) bool {
	pat := ms.pat
	sig := true
	if pat[p+1] == '^' {
		sig = false
		p++
	}
	for p++; p < ec; p++ {
		switch {
		case pat[p] == '%':
			p++
			if matchClass(c, pat[p]) {
				return sig
			}
		case pat[p+1] == '-' && p+2 < ec:
			p += 2
			if pat[p-2] <= c && c <= pat[p] {
				return sig
			}
		case pat[p] == c:
			return sig
		}
	}
	return !sig
}

// matchClass reports whether c is in the class %cl of the C locale; an
// upper-case class is the complement, any other cl stands for itself.
func matchClass(c, cl byte) bool {
	var res bool
	switch cl | 0x20 {
	case 'a':
		res = isAlpha(c)
	case 'c':
		res = c < 32 || c == 127
	case 'd':
		res = isDigit(c)
	case 'l':
		res = 'a' <= c && c <= 'z'
	case 'p':
		res = isPunct(c)
	case 's':
		res = c == ' ' || '\t' <= c && c <= '\r'
	case 'u':
		res = 'A' <= c && c <= 'Z'
	case 'w':
		res = isAlpha(c) || isDigit(c)
	case 'x':
		res = isDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'f'
	case 'z':
		res = c == 0
	default:
		return cl == c
	}
	if 'A' <= cl && cl <= 'Z' {
		return !res
	}
	return res
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isAlpha(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }
func isPunct(c byte) bool { return c > 32 && c < 127 && !isAlpha(c) && !isDigit(c) }

// maxExpand matches as many characters of the class pat[p:ep] as it can,
// then backs off one at a time until the rest of the pattern matches.
func (ms *matchState) maxExpand(s, p, ep int) int {
	i := 0
	for s+i < len(ms.src) && ms.singleMatch(ms.src[s+i], p, ep) {
		ms.tick()
		i++
	}
	for ; i >= 0; i-- {
		if r := ms.match(s+i, ep+1); r != -1 {
			return r
		}
	}
	return -1
}

// plantGreedyLazy makes '-' as greedy as '*': a planted bug, set only by
// the tests that show the differential check against Redis catches one.
var plantGreedyLazy bool

// minExpand matches as few characters of the class pat[p:ep] as it can.
func (ms *matchState) minExpand(s, p, ep int) int {
	if plantGreedyLazy {
		return ms.maxExpand(s, p, ep)
	}
	for {
		if r := ms.match(s, ep+1); r != -1 {
			return r
		}
		if s < len(ms.src) && ms.singleMatch(ms.src[s], p, ep) {
			s++
		} else {
			return -1
		}
	}
}

func (ms *matchState) startCapture(s, p, what int) int {
	if ms.level >= maxCaptures {
		panic(patternError("too many captures"))
	}
	ms.capture[ms.level] = capture{s, what}
	ms.level++
	r := ms.match(s, p)
	if r == -1 {
		ms.level--
	}
	return r
}

func (ms *matchState) endCapture(s, p int) int {
	l := -1
	for i := ms.level - 1; i >= 0; i-- {
		if ms.capture[i].len == capUnfinished {
			l = i
			break
		}
	}
	if l < 0 {
		panic(patternError("invalid pattern capture"))
	}
	ms.capture[l].len = s - ms.capture[l].init
	r := ms.match(s, p)
	if r == -1 {
		ms.capture[l].len = capUnfinished
	}
	return r
}

// matchBalance matches %bxy at src[s:], with x and y at pat[p] and pat[p+1].
func (ms *matchState) matchBalance(s, p int) int {
	if p+1 >= len(ms.pat) {
		panic(patternError("unbalanced pattern"))
	}
	src := ms.src
	if s >= len(src) || src[s] != ms.pat[p] {
		return -1
	}
	b, e := ms.pat[p], ms.pat[p+1]
	open := 1
	for s++; s < len(src); s++ {
		ms.tick()
		switch src[s] {
		case e:
			if open--; open == 0 {
				return s + 1
			}
		case b:
			open++
		}
	}
	return -1
}

// matchCapture matches a back-reference %1-%9 at src[s:].
func (ms *matchState) matchCapture(s int, l byte) int {
	i := ms.checkCapture(l)
	c := ms.capture[i]
	if c.len < 0 || len(ms.src)-s < c.len {
		return -1 // a position capture matches nothing, as in Lua
	}
	if ms.src[c.init:c.init+c.len] == ms.src[s:s+c.len] {
		return s + c.len
	}
	return -1
}

func (ms *matchState) checkCapture(l byte) int {
	i := int(l) - '1'
	if i < 0 || i >= ms.level || ms.capture[i].len == capUnfinished {
		panic(patternError("invalid capture index"))
	}
	return i
}

// reset readies ms for a match attempt.
func (ms *matchState) reset() {
	ms.level = 0
	ms.depth = 0
}

// captureValue returns capture i of the match src[s:e]: with no captures,
// capture 0 is the whole match.
func (ms *matchState) captureValue(i, s, e int) lua.LValue {
	if i >= ms.level {
		if i != 0 {
			panic(patternError("invalid capture index"))
		}
		return lua.LString(ms.src[s:e])
	}
	switch c := ms.capture[i]; c.len {
	case capUnfinished:
		panic(patternError("unfinished capture"))
	case capPosition:
		return lua.LNumber(c.init + 1)
	default:
		return lua.LString(ms.src[c.init : c.init+c.len])
	}
}

// pushCaptures pushes the captures of the match src[s:e] (the whole match
// if there are none and whole is set) and returns how many it pushed.
func (ms *matchState) pushCaptures(L *lua.LState, s, e int, whole bool) int {
	n := ms.level
	if n == 0 && whole {
		n = 1
	}
	for i := range n {
		L.Push(ms.captureValue(i, s, e))
	}
	return n
}

// newMatchState returns a matcher for src and pat that stops when L's
// context is done.
func newMatchState(L *lua.LState, src, pat string) *matchState {
	ms := &matchState{src: src, pat: pat}
	if ctx := L.Context(); ctx != nil {
		ms.done = ctx.Done()
	}
	return ms
}

// anchoredMatchState is newMatchState for find, match and gsub, where a
// leading '^' anchors the match: it returns where the rest of the pattern
// starts and whether it was anchored.
func anchoredMatchState(L *lua.LState, src, pat string) (ms *matchState, p int, anchor bool) {
	ms = newMatchState(L, src, pat)
	if len(pat) > 0 && pat[0] == '^' {
		return ms, 1, true
	}
	return ms, 0, false
}

// raisePatternErrors turns a patternError panic into a Lua error; other
// panics (gopher-lua's own errors) go on.
func raisePatternErrors(L *lua.LState) {
	if r := recover(); r != nil {
		if msg, ok := r.(patternError); ok {
			luaRaise(L, string(msg))
		}
		panic(r)
	}
}

// optInteger is Lua 5.1's luaL_optinteger: argument n as an integer
// (truncated), def when it is absent or nil; a string that reads as a
// number counts as that number.
func optInteger(L *lua.LState, n int, def int64) int64 {
	if v := L.Get(n); v == lua.LNil {
		return def
	}
	f, ok := toNumber(L.Get(n))
	if !ok {
		L.CheckNumber(n) // gopher-lua's type error
	}
	return cInt64(f) // a ptrdiff_t, as x86-64's C converts it
}

// strStart is Lua 5.1's start position for find and match: init counted
// from the end when negative, clamped to [0, len(s)].
func strStart(L *lua.LState, s string) int {
	init := optInteger(L, 3, 1)
	if init < 0 {
		init += int64(len(s)) + 1
	}
	init--
	return int(max(0, min(init, int64(len(s)))))
}

// patternSpecials are the characters that make a find pattern a pattern.
const patternSpecials = "^$*+?.([%-"

// strFind is string.find.
func strFind(L *lua.LState) int { return strFindAux(L, true) }

// strMatch is string.match.
func strMatch(L *lua.LState) int { return strFindAux(L, false) }

func strFindAux(L *lua.LState, find bool) int {
	name := "match"
	if find {
		name = "find"
	}
	src := checkLuaString(L, 1, name)
	pat := checkLuaString(L, 2, name)
	init := strStart(L, src)
	if find && (lua.LVAsBool(L.Get(4)) || !strings.ContainsAny(cString(pat), patternSpecials)) {
		// A plain search, the one place Lua 5.1 reads the whole pattern.
		i := strings.Index(src[init:], pat)
		if i < 0 {
			L.Push(lua.LNil)
			return 1
		}
		L.Push(lua.LNumber(init + i + 1))
		L.Push(lua.LNumber(init + i + len(pat)))
		return 2
	}
	defer raisePatternErrors(L)
	ms, p, anchor := anchoredMatchState(L, src, cString(pat))
	for s := init; ; s++ {
		ms.reset()
		ms.tick()
		if e := ms.match(s, p); e != -1 {
			if find {
				L.Push(lua.LNumber(s + 1))
				L.Push(lua.LNumber(e))
				return ms.pushCaptures(L, s, e, false) + 2
			}
			return ms.pushCaptures(L, s, e, true)
		}
		if s >= len(src) || anchor {
			break
		}
	}
	L.Push(lua.LNil)
	return 1
}

// strGmatch is string.gmatch: an iterator over the matches of a pattern,
// in which '^' is an ordinary character.
func (v *vm) strGmatch(L *lua.LState) int {
	src := checkLuaString(L, 1, "gmatch")
	pat := cString(checkLuaString(L, 2, "gmatch"))
	pos := 0
	L.Push(v.builtin("string.gmatch's iterator", func(L *lua.LState) int {
		defer raisePatternErrors(L)
		ms := newMatchState(L, src, pat)
		for s := pos; s <= len(src); s++ {
			ms.reset()
			ms.tick()
			if e := ms.match(s, 0); e != -1 {
				pos = e
				if e == s {
					pos++ // an empty match: move on at least one
				}
				return ms.pushCaptures(L, s, e, true)
			}
		}
		pos = len(src) + 1
		return 0
	}))
	return 1
}

// strGsub is string.gsub, whose result may not pass the bulk-string limit.
func (v *vm) strGsub(L *lua.LState) int {
	src := checkLuaString(L, 1, "gsub")
	pat := cString(checkLuaString(L, 2, "gsub"))
	// The count is a C int in Lua 5.1 (it wraps at 32 bits), read before
	// the replacement is checked.
	maxN := int(int32(optInteger(L, 4, int64(len(src))+1)))
	repl := L.Get(3)
	switch repl.Type() {
	case lua.LTNumber, lua.LTString, lua.LTTable, lua.LTFunction:
	default:
		luaArgError(L, 3, "gsub", "string/function/table expected")
	}
	defer raisePatternErrors(L)
	ms, p, anchor := anchoredMatchState(L, src, pat)
	ms.limit = v.rt.maxBulk
	var b strings.Builder
	s, n := 0, 0
	for n < maxN {
		ms.reset()
		ms.tick()
		e := ms.match(s, p)
		if e != -1 {
			n++
			ms.addValue(L, &b, s, e, repl)
		}
		switch {
		case e != -1 && e > s:
			s = e
		case s < len(src):
			ms.write(&b, src[s:s+1])
			s++
		default:
			s = len(src) + 1 // done: nothing left to copy
		}
		if s > len(src) || anchor {
			break
		}
	}
	if s < len(src) {
		ms.write(&b, src[s:])
	}
	L.Push(lua.LString(b.String()))
	L.Push(lua.LNumber(n))
	return 2
}

// addValue appends the replacement of the match src[s:e] to b.
func (ms *matchState) addValue(L *lua.LState, b *strings.Builder, s, e int, repl lua.LValue) {
	var val lua.LValue
	switch r := repl.(type) {
	case lua.LString:
		ms.addString(b, string(r), s, e)
		return
	case lua.LNumber:
		ms.addString(b, formatLuaNumber(float64(r)), s, e)
		return
	case *lua.LTable:
		val = L.GetTable(r, ms.captureValue(0, s, e))
	case *lua.LFunction:
		top := L.GetTop()
		L.Push(r)
		n := ms.pushCaptures(L, s, e, true)
		L.Call(n, 1)
		val = L.Get(-1)
		L.SetTop(top)
	}
	switch x := val.(type) {
	case lua.LString:
		ms.write(b, string(x))
	case lua.LNumber:
		ms.write(b, formatLuaNumber(float64(x)))
	default:
		if !lua.LVAsBool(val) {
			ms.write(b, ms.src[s:e]) // false or nil: keep the match
			return
		}
		panic(patternError("invalid replacement value (a " + val.Type().String() + ")"))
	}
}

// addString appends the replacement string r for the match src[s:e]: %0
// is the match, %1-%9 its captures, and '%' before any other character
// stands for that character (a '%' at the very end, for the NUL byte that
// ends the string in Lua 5.1's C).
func (ms *matchState) addString(b *strings.Builder, r string, s, e int) {
	for i := 0; i < len(r); i++ {
		c := r[i]
		if c != '%' {
			j := strings.IndexByte(r[i:], '%')
			if j < 0 {
				j = len(r) - i
			}
			ms.write(b, r[i:i+j])
			i += j - 1
			continue
		}
		i++
		switch {
		case i == len(r):
			ms.write(b, "\x00")
		case !isDigit(r[i]):
			ms.write(b, r[i:i+1])
		case r[i] == '0':
			ms.write(b, ms.src[s:e])
		default:
			switch v := ms.captureValue(int(r[i]-'1'), s, e).(type) {
			case lua.LString:
				ms.write(b, string(v))
			case lua.LNumber:
				ms.write(b, formatLuaNumber(float64(v)))
			}
		}
	}
}

// write appends piece to gsub's result b, which may not grow past the
// bulk-string limit; a long piece counts as matcher steps, so that a
// replacement copied many times stops with the script.
func (ms *matchState) write(b *strings.Builder, piece string) {
	if b.Len()+len(piece) > ms.limit {
		panic(patternError("resulting string too large"))
	}
	ms.steps += len(piece) >> 6
	ms.tick()
	b.WriteString(piece)
}
