package lua

// This file gives scripts Lua 5.1's operators where gopher-lua's virtual
// machine differs from Redis's Lua:
//   - Arithmetic on strings converts them as Lua 5.1 does (the C library's
//     strtod, then a hexadecimal integer): gopher-lua read "010" as octal 8
//     and accepted "1_000" and "0b101". Arithmetic metamethods of strings
//     do it, since gopher-lua consults them before converting; those of
//     numbers, nil and booleans give Lua's error ("attempt to perform
//     arithmetic on a nil value") for what does not convert.
//   - Concatenation writes numbers as "%.14g" (gopher-lua wrote 1e15 as
//     1000000000000000 and 1/3 with 16 digits) and its errors name the
//     operand as Lua does ("attempt to concatenate local 'x' (a nil
//     value)"). The VM's concatenation cannot be hooked, so compile rewrites
//     each chain a .. b .. c into one call of a builtin, which the script
//     reaches through a hidden local and cannot replace.
//   - A numeric for accepts numeric strings as bounds (for i = 1, ARGV[1]),
//     and refuses other bounds with Lua's messages, through the same
//     rewrite.

import (
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
)

// The globals the rewritten code reads into hidden locals: a NUL cannot
// appear in a Lua identifier, so no script can name them as variables, and
// scripts cannot write globals. A script can read them by indexing _G with
// the name (Redis would say there is no such global); calling them does
// no more than the operators do.
const (
	concatName = "\x00concat"
	forNumName = "\x00fornum"
)

// installOps adds the operator builtins to g, and arithmetic metamethods
// to the string metatable strMT and to a new metatable of nil, booleans and
// numbers, which getmetatable hides, and which it returns.
func (v *vm) installOps(g, strMT *lua.LTable) *lua.LTable {
	L := v.L
	g.RawSetString(concatName, L.NewFunction(v.concat))
	g.RawSetString(forNumName, L.NewFunction(forNum))
	others := L.NewTable()
	for event, op := range map[string]func(a, b float64) float64{
		"__add": func(a, b float64) float64 { return a + b },
		"__sub": func(a, b float64) float64 { return a - b },
		"__mul": func(a, b float64) float64 { return a * b },
		"__div": func(a, b float64) float64 { return a / b },
		// Lua 5.1's luai_nummod; the VM's own (for two numbers) rounds
		// differently only at the extremes.
		"__mod": func(a, b float64) float64 { return a - math.Floor(a/b)*b },
		"__pow": luaPow,
		"__unm": func(a, _ float64) float64 { return -a },
	} {
		f := L.NewFunction(arith(event, op))
		strMT.RawSetString(event, f)
		others.RawSetString(event, f)
	}
	for _, t := range []lua.LValue{lua.LNil, lua.LFalse, lua.LNumber(0)} {
		L.SetMetatable(t, others)
	}
	// Calling what is not a function: gopher-lua looks for __call before
	// it fails, so these types fail with Lua's message ("attempt to call a
	// nil value", though without the variable Lua may name).
	call := L.NewFunction(func(L *lua.LState) int {
		luaRaise(L, "attempt to call a "+typeName(L, 1)+" value")
		return 0
	})
	strMT.RawSetString("__call", call)
	others.RawSetString("__call", call)
	// Only tables take a metatable from a script, as in Lua: these types'
	// (and so every later script's arithmetic) must not be replaceable.
	setmt := g.RawGetString("setmetatable").(*lua.LFunction)
	g.RawSetString("setmetatable", L.NewFunction(func(L *lua.LState) int {
		t, ok := L.Get(1).(*lua.LTable)
		if !ok {
			luaArgError(L, 1, "setmetatable", "table expected, got "+typeName(L, 1))
		}
		if v.isReadonly(t) {
			L.Error(lua.LString(readonlyErr), 0) // from C in Redis: no position
		}
		switch L.Get(2).(type) {
		case *lua.LNilType, *lua.LTable:
			if L.GetTop() >= 2 {
				return setmt.GFunction(L)
			}
		}
		luaArgError(L, 2, "setmetatable", "nil or table expected")
		return 0
	}))
	getmt := g.RawGetString("getmetatable").(*lua.LFunction)
	g.RawSetString("getmetatable", L.NewFunction(func(L *lua.LState) int {
		if L.GetTop() == 0 {
			luaArgError(L, 1, "getmetatable", "value expected")
		}
		switch t := L.Get(1).(type) {
		case *lua.LNilType, lua.LBool, lua.LNumber:
			L.Push(lua.LNil) // as in Lua, these types have none
			return 1
		case lua.LString:
			L.Push(v.stringMT)
			return 1
		case *lua.LTable:
			if mt, ok := v.readonlyMetatable(t); ok {
				L.Push(mt)
				return 1
			}
		}
		return getmt.GFunction(L)
	}))
	return others
}

// luaPow is C's pow as Lua 5.1 calls it: a NaN operand comes back as it
// is, and a NaN the operation makes is x86's default one, which prints as
// "-nan" (Go's math.Pow returns a positive NaN for both).
func luaPow(a, b float64) float64 {
	r := math.Pow(a, b)
	if math.IsNaN(r) {
		switch {
		case math.IsNaN(a):
			return a
		case math.IsNaN(b):
			return b
		}
		return math.Copysign(math.NaN(), -1)
	}
	return r
}

// arith is the metamethod for event of strings, numbers, nil and
// booleans: gopher-lua's VM computes two numbers itself and calls it for
// any other pair where one of these comes first or the first has no
// metamethod, before converting anything. Two operands that convert
// (numbers or numeric strings, read as the C library does) give op's
// result; otherwise a table's or userdata's own metamethod runs if one
// has it, and else the error blames the first operand that does not
// convert, as Lua 5.1 does.
func arith(event string, op func(a, b float64) float64) lua.LGFunction {
	return func(L *lua.LState) int {
		a := L.Get(1)
		b := a // __unm has one operand (Lua passes it twice)
		if L.GetTop() >= 2 && event != "__unm" {
			b = L.Get(2)
		}
		x, okA := toNumber(a)
		y, okB := toNumber(b)
		if okA && okB {
			L.Push(lua.LNumber(op(x, y)))
			return 1
		}
		for _, o := range [2]lua.LValue{a, b} {
			switch o.(type) {
			case *lua.LTable, *lua.LUserData: // the other types' is this one
				if tm := L.GetMetaField(o, event); tm != lua.LNil {
					L.Push(tm)
					L.Push(a)
					L.Push(b)
					L.Call(2, 1)
					return 1
				}
			}
		}
		blame := a
		if okA {
			blame = b
		}
		luaRaise(L, "attempt to perform arithmetic on a "+blame.Type().String()+" value")
		return 0
	}
}

// concat is Lua 5.1's concatenation of a chain a1 .. a2 .. ... .. an, as
// one CONCAT instruction does it (luaV_concat): rewritten code calls
// concat(names, a1, ..., an), names being "" or the n operands' names as
// Lua reports them ("local 'x'", or "" for none) joined by NULs. From the
// right, the longest run of strings and numbers (numbers written as
// "%.14g") is joined at once; a pair with anything else calls the first
// operand's __concat, else the second's, and the result takes the pair's
// place; without one, the error blames the first operand of the pair that
// is not a string or number, named by its position. The result is held to
// the bulk-string limit.
func (v *vm) concat(L *lua.LState) int {
	names, _ := L.Get(1).(lua.LString)
	n := L.GetTop() - 1
	var buf [8]lua.LValue
	var sbuf [8]string
	vals := buf[:0]
	for i := range n {
		vals = append(vals, L.Get(i+2))
	}
	limit := v.rt.maxBulk
	for last := n - 1; last > 0; {
		a, b := vals[last-1], vals[last]
		if okA, okB := stringLike(a), stringLike(b); !okA || !okB {
			tm := L.GetMetaField(a, "__concat")
			if tm == lua.LNil {
				tm = L.GetMetaField(b, "__concat")
			}
			if tm == lua.LNil {
				at, blame := last-1, a
				if okA {
					at, blame = last, b
				}
				concatError(L, string(names), at, blame)
			}
			L.Push(tm)
			L.Push(a)
			L.Push(b)
			L.Call(2, 1)
			vals[last-1] = L.Get(-1)
			L.Pop(1)
			last--
			continue
		}
		// The run of strings and numbers ending at last, each number
		// written once (strs holds the run from the right).
		first, size := last+1, 0
		strs := sbuf[:0]
		for first > 0 && stringLike(vals[first-1]) {
			first--
			str, _ := toStringArg(vals[first])
			strs = append(strs, str)
			size += len(str)
		}
		if size > limit {
			luaRaise(L, "string length overflow")
		}
		var out strings.Builder
		out.Grow(size)
		for i := len(strs) - 1; i >= 0; i-- {
			out.WriteString(strs[i])
		}
		vals[first] = lua.LString(out.String())
		last = first
	}
	L.Push(vals[0])
	return 1
}

// stringLike reports whether v concatenates as it is: a string or a number.
func stringLike(v lua.LValue) bool {
	switch v.(type) {
	case lua.LString, lua.LNumber:
		return true
	}
	return false
}

// concatError raises Lua's error for concatenating blame, the operand at
// position at of a chain whose names are names (see concat).
func concatError(L *lua.LState, names string, at int, blame lua.LValue) {
	name := ""
	if names != "" {
		if parts := strings.Split(names, "\x00"); at < len(parts) {
			name = parts[at]
		}
	}
	if name != "" {
		luaRaise(L, "attempt to concatenate "+name+" (a "+blame.Type().String()+" value)")
	}
	luaRaise(L, "attempt to concatenate a "+blame.Type().String()+" value")
}

// forNum is a numeric for's check of its bound forNum(v, which), which
// 1, 2 or 3 for the initial value, the limit or the step: it returns a
// number or a numeric string's value, and raises Lua 5.1's error for
// anything else. (Lua evaluates all three bounds before checking any;
// here each is checked as it is evaluated, which differs only when a
// later bound's expression itself fails.)
func forNum(L *lua.LState) int {
	if f, ok := toNumber(L.Get(1)); ok {
		L.Push(lua.LNumber(f))
		return 1
	}
	what := [...]string{"initial value", "limit", "step"}[min(max(L.OptInt(2, 1), 1), 3)-1]
	luaRaise(L, "'for' "+what+" must be a number")
	return 0
}

// rewriteOps rewrites a parsed chunk for concat and forNum (see the top
// of this file) and returns it. The chunk is the main function of a
// script: its locals are the script's, and every name not declared is a
// global. The builtins it calls become locals of the chunk, declared
// first, so that a call finds them in a register or an upvalue rather
// than through the global table's lookups.
func rewriteOps(chunk []ast.Stmt) []ast.Stmt {
	r := &opRewriter{}
	r.function(nil, chunk)
	var names []string
	var values []ast.Expr
	for _, u := range []struct {
		used bool
		name string
	}{{r.concat, concatName}, {r.forNum, forNumName}} {
		if u.used {
			names = append(names, u.name)
			values = append(values, &ast.IdentExpr{Value: u.name})
		}
	}
	if names == nil {
		return chunk
	}
	decl := &ast.LocalAssignStmt{Names: names, Exprs: values}
	if len(chunk) > 0 {
		decl.SetLine(chunk[0].Line())
		decl.SetLastLine(chunk[0].Line())
	}
	return append([]ast.Stmt{decl}, chunk...)
}

// opRewriter walks a chunk, keeping the names in scope to describe
// operands as Lua 5.1 does: a local of the running function, an upvalue
// (a local of an enclosing one) or a global.
type opRewriter struct {
	fn     *fnScope // the innermost function
	concat bool     // a concatenation was rewritten
	forNum bool     // a numeric for's bound was wrapped
}

// fnScope is one function's locals in scope, innermost last.
type fnScope struct {
	parent *fnScope
	locals []string
}

// function walks a function's body with params as its first locals.
func (r *opRewriter) function(params []string, body []ast.Stmt) {
	r.fn = &fnScope{parent: r.fn, locals: append([]string(nil), params...)}
	r.block(body)
	r.fn = r.fn.parent
}

// block walks stmts in a scope of their own.
func (r *opRewriter) block(stmts []ast.Stmt) {
	n := len(r.fn.locals)
	r.stmts(stmts)
	r.fn.locals = r.fn.locals[:n]
}

func (r *opRewriter) declare(names ...string) { r.fn.locals = append(r.fn.locals, names...) }

func (r *opRewriter) stmts(stmts []ast.Stmt) {
	for _, s := range stmts {
		r.stmt(s)
	}
}

func (r *opRewriter) stmt(s ast.Stmt) {
	switch s := s.(type) {
	case *ast.AssignStmt:
		r.exprs(s.Lhs)
		r.exprs(s.Rhs)
	case *ast.LocalAssignStmt:
		// local function f: f is in scope in its own body. Otherwise the
		// names come into scope after their values (local x = x).
		if len(s.Names) == 1 && len(s.Exprs) == 1 {
			if _, ok := s.Exprs[0].(*ast.FunctionExpr); ok {
				r.declare(s.Names...)
				r.exprs(s.Exprs)
				return
			}
		}
		r.exprs(s.Exprs)
		r.declare(s.Names...)
	case *ast.FuncCallStmt:
		s.Expr = r.expr(s.Expr)
	case *ast.DoBlockStmt:
		r.block(s.Stmts)
	case *ast.WhileStmt:
		s.Condition = r.expr(s.Condition)
		r.block(s.Stmts)
	case *ast.RepeatStmt:
		// The condition sees the body's locals.
		n := len(r.fn.locals)
		r.stmts(s.Stmts)
		s.Condition = r.expr(s.Condition)
		r.fn.locals = r.fn.locals[:n]
	case *ast.IfStmt:
		s.Condition = r.expr(s.Condition)
		r.block(s.Then)
		r.block(s.Else)
	case *ast.NumberForStmt:
		s.Init = r.forBound(r.expr(s.Init), 1)
		s.Limit = r.forBound(r.expr(s.Limit), 2)
		if s.Step != nil {
			s.Step = r.forBound(r.expr(s.Step), 3)
		}
		n := len(r.fn.locals)
		r.declare(s.Name)
		r.block(s.Stmts)
		r.fn.locals = r.fn.locals[:n]
	case *ast.GenericForStmt:
		r.exprs(s.Exprs)
		n := len(r.fn.locals)
		r.declare(s.Names...)
		r.block(s.Stmts)
		r.fn.locals = r.fn.locals[:n]
	case *ast.FuncDefStmt:
		// function a.b:c() has the implicit parameter self; the name is
		// an assignment target, walked for its expressions.
		if s.Name.Func != nil {
			s.Name.Func = r.expr(s.Name.Func)
		}
		method := s.Name.Receiver != nil
		if method {
			s.Name.Receiver = r.expr(s.Name.Receiver)
		}
		r.functionExpr(s.Func, method)
	case *ast.ReturnStmt:
		r.exprs(s.Exprs)
	}
}

// functionExpr walks a function's body with its parameters in scope:
// self first for a method, and arg (Lua 5.0's table of the extra
// arguments, which Lua 5.1 keeps) for a nested function with "...".
func (r *opRewriter) functionExpr(f *ast.FunctionExpr, method bool) {
	var params []string
	if method {
		params = append(params, "self")
	}
	params = append(params, f.ParList.Names...)
	if f.ParList.HasVargs {
		params = append(params, "arg")
	}
	r.function(params, f.Stmts)
}

func (r *opRewriter) exprs(es []ast.Expr) {
	for i, e := range es {
		es[i] = r.expr(e)
	}
}

// expr walks e and returns it, rewritten if it is a concatenation.
func (r *opRewriter) expr(e ast.Expr) ast.Expr {
	switch e := e.(type) {
	case *ast.AttrGetExpr:
		e.Object = r.expr(e.Object)
		e.Key = r.expr(e.Key)
	case *ast.TableExpr:
		for _, f := range e.Fields {
			if f.Key != nil {
				f.Key = r.expr(f.Key)
			}
			f.Value = r.expr(f.Value)
		}
	case *ast.FuncCallExpr:
		if e.Func != nil {
			e.Func = r.expr(e.Func)
		}
		if e.Receiver != nil {
			e.Receiver = r.expr(e.Receiver)
		}
		r.exprs(e.Args)
	case *ast.LogicalOpExpr:
		e.Lhs, e.Rhs = r.expr(e.Lhs), r.expr(e.Rhs)
	case *ast.RelationalOpExpr:
		e.Lhs, e.Rhs = r.expr(e.Lhs), r.expr(e.Rhs)
	case *ast.ArithmeticOpExpr:
		e.Lhs, e.Rhs = r.expr(e.Lhs), r.expr(e.Rhs)
	case *ast.UnaryMinusOpExpr:
		e.Expr = r.expr(e.Expr)
	case *ast.UnaryNotOpExpr:
		e.Expr = r.expr(e.Expr)
	case *ast.UnaryLenOpExpr:
		e.Expr = r.expr(e.Expr)
	case *ast.FunctionExpr:
		r.functionExpr(e, false)
	case *ast.StringConcatOpExpr:
		// A chain a .. b .. c is right-associative: Rhs holds the rest.
		// Lua concatenates it in one instruction, and so does one call.
		var operands []ast.Expr
		var names []string
		named := false
		var x ast.Expr = e
		for {
			c, ok := x.(*ast.StringConcatOpExpr)
			if !ok {
				break
			}
			operands = append(operands, c.Lhs)
			x = c.Rhs
		}
		operands = append(operands, x)
		for i, o := range operands {
			name := r.name(o)
			named = named || name != ""
			names = append(names, name)
			operands[i] = r.expr(o)
		}
		if !named {
			names = nil
		}
		r.concat = true
		args := append([]ast.Expr{stringExpr(strings.Join(names, "\x00"), e)}, operands...)
		call := &ast.FuncCallExpr{Func: identExpr(concatName, e), Args: args, AdjustRet: true}
		// Lua's error line is the chain's last, where its instruction is.
		line := e.Line()
		for _, o := range operands {
			line = max(line, o.Line(), o.LastLine())
		}
		call.SetLine(line)
		call.SetLastLine(line)
		return call
	}
	return e
}

// forBound wraps a numeric for's bound (which: see forNum) in a call of
// forNum, unless it is a number constant.
func (r *opRewriter) forBound(e ast.Expr, which int) ast.Expr {
	c := e
	if m, ok := c.(*ast.UnaryMinusOpExpr); ok {
		c = m.Expr
	}
	if _, ok := c.(*ast.NumberExpr); ok {
		return e
	}
	r.forNum = true
	n := &ast.NumberExpr{Value: strconv.Itoa(which)}
	n.SetLine(e.Line())
	n.SetLastLine(e.LastLine())
	call := &ast.FuncCallExpr{Func: identExpr(forNumName, e), Args: []ast.Expr{e, n}, AdjustRet: true}
	call.SetLine(e.Line())
	call.SetLastLine(e.LastLine())
	return call
}

// name describes an operand as Lua 5.1's errors do, or returns "" for a
// value without a name (a call's result, a constant, an expression).
func (r *opRewriter) name(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.IdentExpr:
		return r.kind(e.Value) + " '" + e.Value + "'"
	case *ast.AttrGetExpr:
		// Lua names a field by a constant string key, and "?" otherwise.
		if k, ok := e.Key.(*ast.StringExpr); ok {
			return "field '" + cString(k.Value) + "'"
		}
		return "field '?'"
	}
	return ""
}

// kind says whether name is a local, an upvalue or a global where it is
// used.
func (r *opRewriter) kind(name string) string {
	for f, own := r.fn, true; f != nil; f, own = f.parent, false {
		for i := len(f.locals) - 1; i >= 0; i-- {
			if f.locals[i] == name {
				if own {
					return "local"
				}
				return "upvalue"
			}
		}
	}
	return "global"
}

func identExpr(name string, at ast.Expr) *ast.IdentExpr {
	e := &ast.IdentExpr{Value: name}
	e.SetLine(at.Line())
	e.SetLastLine(at.LastLine())
	return e
}

func stringExpr(s string, at ast.Expr) *ast.StringExpr {
	e := &ast.StringExpr{Value: s}
	e.SetLine(at.Line())
	e.SetLastLine(at.LastLine())
	return e
}
