package lua

// This file holds the cjson library Redis gives scripts: lua-cjson 2.1.0
// (Mark Pulford's), as Redis 7.0 builds it, written anew from its
// behaviour. encode writes Lua values as JSON (numbers as "%.14g", tables
// as arrays when their keys are 1..n and not too sparse, as objects
// otherwise) and decode reads JSON into Lua values, JSON's null being the
// value cjson.null. The configuration functions set how: lua-cjson keeps
// one configuration per module table, so the global cjson's is the
// Runtime's, shared by every script until Flush, as Redis's is shared by
// every script until SCRIPT FLUSH; cjson.new returns a table with a fresh
// one.
//
// Where the C code's result depends on its Lua stack (nesting past Lua's
// limit of LUAI_MAXCSTACK slots, only reachable when the depth limits are
// raised), the slots it would hold are counted, so the same nesting fails
// with the same message.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"

	"github.com/nxkv/nxkv/resp/internal/cnum"
)

// cjsonConfig is lua-cjson's configuration, with its defaults in
// defaultCJSON. The integer settings are C ints.
type cjsonConfig struct {
	sparseConvert  int // encode excessively sparse arrays as objects (1) or fail (0)
	sparseRatio    int32
	sparseSafe     int32
	encodeMaxDepth int32
	decodeMaxDepth int32
	encodeInvalid  int // NaN and infinities: fail (0), write them (1), write null (2)
	precision      int32
	keepBuffer     int // lua-cjson's buffer reuse: no effect here but its setting
	decodeInvalid  int // accept NaN, infinities, hexadecimal, leading + and zeros
}

var defaultCJSON = cjsonConfig{sparseRatio: 2, sparseSafe: 10, encodeMaxDepth: 1000,
	decodeMaxDepth: 1000, precision: 14, keepBuffer: 1, decodeInvalid: 1}

// cjsonState is the configuration of one cjson table. It is safe for
// concurrent use: the global cjson's is shared by the Runtime's scripts.
type cjsonState struct {
	mu  sync.Mutex
	cfg cjsonConfig // guarded by mu
}

func (c *cjsonState) get() cjsonConfig {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cfg
}

func (c *cjsonState) reset() {
	c.mu.Lock()
	c.cfg = defaultCJSON
	c.mu.Unlock()
}

// newCJSON returns a cjson table with the configuration st: the global
// table (st is the Runtime's) or one cjson.new made.
func (v *vm) newCJSON(st *cjsonState) *lua.LTable {
	L := v.L
	t := L.CreateTable(0, 13)
	fns := map[string]lua.LGFunction{
		"encode": func(L *lua.LState) int {
			if L.GetTop() != 1 {
				luaArgError(L, 1, "encode", "expected 1 argument")
			}
			e := jsonEncoder{L: L, cfg: st.get(), null: v.null, stepper: stepper{limit: v.rt.maxBulk}}
			e.value(L.Get(1), 0, 1)
			L.Push(lua.LString(e.b))
			return 1
		},
		"decode": func(L *lua.LState) int {
			if L.GetTop() != 1 {
				luaArgError(L, 1, "decode", "expected 1 argument")
			}
			d := jsonDecoder{L: L, s: checkLuaString(L, 1, "decode"), cfg: st.get(), null: v.null,
				stepper: stepper{limit: math.MaxInt}}
			L.Push(d.decode())
			return 1
		},
		"new": func(L *lua.LState) int {
			st := &cjsonState{cfg: defaultCJSON}
			L.Push(v.newCJSON(st))
			return 1
		},
	}
	for name, opts := range cjsonSettings {
		fns[name] = func(L *lua.LState) int { return st.configure(L, name, opts) }
	}
	for name, fn := range fns {
		t.RawSetString(name, v.builtin("cjson."+name, fn))
	}
	t.RawSetString("null", v.null)
	t.RawSetString("_NAME", lua.LString("cjson"))
	t.RawSetString("_VERSION", lua.LString("2.1.0"))
	return t
}

// A cjsonSetting is what one argument of a configuration function sets:
// an integer in [min, max], or one of names (where a boolean stands for
// the first two).
type cjsonSetting struct {
	integer  func(c *cjsonConfig) *int32
	min, max int32
	enum     func(c *cjsonConfig) *int
	names    []string
}

var boolOptions = []string{"off", "on"}

// cjsonSettings are the configuration functions, by name, and what their
// arguments set.
var cjsonSettings = map[string][]cjsonSetting{
	"encode_sparse_array": {
		{enum: func(c *cjsonConfig) *int { return &c.sparseConvert }, names: boolOptions},
		{integer: func(c *cjsonConfig) *int32 { return &c.sparseRatio }, max: math.MaxInt32},
		{integer: func(c *cjsonConfig) *int32 { return &c.sparseSafe }, max: math.MaxInt32},
	},
	"encode_max_depth":        {{integer: func(c *cjsonConfig) *int32 { return &c.encodeMaxDepth }, min: 1, max: math.MaxInt32}},
	"decode_max_depth":        {{integer: func(c *cjsonConfig) *int32 { return &c.decodeMaxDepth }, min: 1, max: math.MaxInt32}},
	"encode_number_precision": {{integer: func(c *cjsonConfig) *int32 { return &c.precision }, min: 1, max: 14}},
	"encode_keep_buffer":      {{enum: func(c *cjsonConfig) *int { return &c.keepBuffer }, names: boolOptions}},
	"encode_invalid_numbers": {{enum: func(c *cjsonConfig) *int { return &c.encodeInvalid },
		names: []string{"off", "on", "null"}}},
	"decode_invalid_numbers": {{enum: func(c *cjsonConfig) *int { return &c.decodeInvalid }, names: boolOptions}},
}

// configure is the configuration function fname, whose arguments set
// what settings say: more arguments than settings are refused, absent or
// nil ones change nothing, and it returns every setting, as lua-cjson's do.
func (c *cjsonState) configure(L *lua.LState, fname string, settings []cjsonSetting) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(settings)
	if L.GetTop() > n {
		luaArgError(L, n+1, fname, "found too many arguments")
	}
	for L.GetTop() < n { // the settings are pushed after the arguments
		L.Push(lua.LNil)
	}
	for i, s := range settings {
		if s.enum != nil {
			enumOption(L, i+1, fname, s.enum(&c.cfg), s.names, 1)
		} else {
			intOption(L, i+1, fname, s.integer(&c.cfg), s.min, s.max)
		}
	}
	return n
}

// enumOption sets *setting from argument i, unless it is absent or nil, to
// the index of its option name, or to boolTrue or 0 for a boolean; it
// pushes the setting as a boolean (when it is 0 or boolTrue) or its
// option's name.
func enumOption(L *lua.LState, i int, fname string, setting *int, options []string, boolTrue int) {
	if a := L.Get(i); a != lua.LNil {
		if b, ok := a.(lua.LBool); ok {
			*setting = 0
			if b {
				*setting = boolTrue
			}
		} else {
			name := checkLuaString(L, i, fname)
			k := -1
			for j, o := range options {
				if o == cString(name) {
					k = j
				}
			}
			if k < 0 {
				luaArgError(L, i, fname, "invalid option '"+cString(name)+"'")
			}
			*setting = k
		}
	}
	if *setting == 0 || *setting == boolTrue {
		L.Push(lua.LBool(*setting != 0))
	} else {
		L.Push(lua.LString(options[*setting]))
	}
}

// intOption sets *setting from argument i, unless it is absent or nil, to
// a C int that must lie in [min, max], and pushes the setting. lua-cjson
// blames argument 1 for a value out of range, whichever it was.
func intOption(L *lua.LState, i int, fname string, setting *int32, min, max int32) {
	if L.Get(i) != lua.LNil {
		n := luaCInt(L, i, fname)
		if n < min || n > max {
			luaArgError(L, 1, fname, fmt.Sprintf("expected integer between %d and %d", min, max))
		}
		*setting = n
	}
	L.Push(lua.LNumber(*setting))
}

// plantCodecBugs makes cjson leave '/' unescaped and cmsgpack pack every
// fraction as a double: planted bugs, set only by the package's tests.
var plantCodecBugs bool

// checkEvery is how many values an encoder or decoder handles between two
// checks of the script's context.
const checkEvery = 1 << 12

// stepper counts the values an encoder or decoder handles, and stops it,
// every checkEvery of them, once its script's context is done or its
// output has passed the longest string allowed (proto-max-bulk-len).
type stepper struct {
	steps int
	limit int
}

// step counts one value of a builtin with n bytes of output so far, the
// builtin doing what.
func (s *stepper) step(L *lua.LState, n int, what string) {
	if n > s.limit {
		luaRaise(L, "resulting string too large")
	}
	if s.steps++; s.steps < checkEvery {
		return
	}
	s.steps = 0
	select {
	case <-L.Context().Done():
		luaRaise(L, "script stopped while "+what)
	default:
	}
}

// jsonEncoder is one cjson.encode.
type jsonEncoder struct {
	L    *lua.LState
	cfg  cjsonConfig
	null lua.LValue
	b    []byte
	stepper
}

// jsonEscapes are lua-cjson's escapes of the bytes it escapes.
var jsonEscapes = func() (e [256]string) {
	for c := range 0x20 {
		e[c] = fmt.Sprintf("\\u%04x", c)
	}
	e['\b'], e['\t'], e['\n'], e['\f'], e['\r'] = `\b`, `\t`, `\n`, `\f`, `\r`
	e['"'], e['\\'], e['/'], e[0x7f] = `\"`, `\\`, `\/`, `\u007f`
	return e
}()

// fail raises lua-cjson's encoding error about a value of type typ.
func (e *jsonEncoder) fail(typ, reason string) {
	luaRaise(e.L, "Cannot serialise "+typ+": "+reason)
}

// value appends v, at the given table depth, as JSON; slots is how many
// Lua stack slots the C encoder would hold with v on top.
func (e *jsonEncoder) value(v lua.LValue, depth, slots int) {
	e.step(e.L, len(e.b), "encoding JSON")
	switch v := v.(type) {
	case lua.LString:
		e.str(string(v))
	case lua.LNumber:
		e.number(float64(v))
	case lua.LBool:
		if v {
			e.b = append(e.b, "true"...)
		} else {
			e.b = append(e.b, "false"...)
		}
	case *lua.LNilType:
		e.b = append(e.b, "null"...)
	case *lua.LTable:
		depth++
		if depth > int(e.cfg.encodeMaxDepth) || slots+3 > maxLuaResults {
			luaRaise(e.L, "Cannot serialise, excessive nesting ("+strconv.Itoa(depth)+")")
		}
		if n := e.arrayLength(v); n > 0 {
			e.b = append(e.b, '[')
			for i := 1; i <= n; i++ {
				if i > 1 {
					e.b = append(e.b, ',')
				}
				e.value(v.RawGetInt(i), depth, slots+1)
			}
			e.b = append(e.b, ']')
			return
		}
		e.b = append(e.b, '{')
		first := true
		for k, val := v.Next(lua.LNil); k != lua.LNil; k, val = v.Next(k) {
			if !first {
				e.b = append(e.b, ',')
			}
			first = false
			switch k := k.(type) {
			case lua.LNumber:
				e.b = append(e.b, '"')
				e.number(float64(k))
				e.b = append(e.b, '"', ':')
			case lua.LString:
				e.str(string(k))
				e.b = append(e.b, ':')
			default:
				e.fail(k.Type().String(), "table key must be a number or string")
			}
			e.value(val, depth, slots+2)
		}
		e.b = append(e.b, '}')
	default:
		if v == e.null {
			e.b = append(e.b, "null"...)
			return
		}
		e.fail(v.Type().String(), "type not supported")
	}
}

// arrayLength is lua-cjson's test of a table: the array length if every
// key is an integer from 1 and the array is not too sparse, 0 or less
// (an object) otherwise. The largest key goes through C's conversion
// to int, so past 2^31 it reads as INT_MIN, as in Redis.
func (e *jsonEncoder) arrayLength(t *lua.LTable) int {
	var max, items int32
	for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
		n, ok := k.(lua.LNumber)
		f := float64(n)
		if !ok || f == 0 || math.Floor(f) != f || f < 1 {
			return -1
		}
		if f > float64(max) {
			max = cInt32(f)
		}
		items++
	}
	if e.cfg.sparseRatio > 0 && max > items*e.cfg.sparseRatio && max > e.cfg.sparseSafe {
		if e.cfg.sparseConvert == 0 {
			e.fail("table", "excessively sparse array")
		}
		return -1
	}
	return int(max)
}

func (e *jsonEncoder) str(s string) {
	e.b = append(e.b, '"')
	for i := 0; i < len(s); i++ {
		if esc := jsonEscapes[s[i]]; esc != "" && !(plantCodecBugs && s[i] == '/') {
			e.b = append(e.b, esc...)
		} else {
			e.b = append(e.b, s[i])
		}
	}
	e.b = append(e.b, '"')
}

func (e *jsonEncoder) number(f float64) {
	switch e.cfg.encodeInvalid {
	case 0:
		if math.IsInf(f, 0) || math.IsNaN(f) {
			e.fail("number", "must not be NaN or Inf")
		}
	case 1:
		if math.IsNaN(f) {
			e.b = append(e.b, "nan"...)
			return
		}
	default:
		if math.IsInf(f, 0) || math.IsNaN(f) {
			e.b = append(e.b, "null"...)
			return
		}
	}
	e.b = append(e.b, formatG(f, int(e.cfg.precision))...)
}

// formatG formats f as C's "%.<prec>g".
func formatG(f float64, prec int) string {
	if s, ok := cnum.FormatNonFinite(f); ok {
		return s
	}
	return strconv.FormatFloat(f, 'g', prec, 64)
}

// JSON tokens, with lua-cjson's names, which its errors show.
const (
	tObjBegin = iota
	tObjEnd
	tArrBegin
	tArrEnd
	tString
	tNumber
	tBoolean
	tNull
	tColon
	tComma
	tEnd
	tError
)

var jsonTokenNames = [...]string{"T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END", "T_STRING",
	"T_NUMBER", "T_BOOLEAN", "T_NULL", "T_COLON", "T_COMMA", "T_END", "T_ERROR"}

type jsonToken struct {
	typ   int
	index int     // where it starts (for an error: where the error is)
	str   string  // a string's value, or an error's message
	num   float64 // a number's value, or 1 for true
}

// jsonDecoder is one cjson.decode. The C decoder reads a C string: a NUL
// byte ends the document (it reads as the end), and ends a string early
// (an error).
type jsonDecoder struct {
	L     *lua.LState
	s     string
	i     int
	cfg   cjsonConfig
	null  lua.LValue
	depth int
	tmp   []byte
	stepper
}

// at is the byte at i, NUL past the end.
func (d *jsonDecoder) at(i int) byte {
	if i < len(d.s) {
		return d.s[i]
	}
	return 0
}

func (d *jsonDecoder) decode() lua.LValue {
	if len(d.s) >= 2 && (d.s[0] == 0 || d.s[1] == 0) {
		luaRaise(d.L, "JSON parser does not support UTF-16 or UTF-32")
	}
	v := d.value(d.next(), 1)
	if tok := d.next(); tok.typ != tEnd {
		d.fail("the end", tok)
	}
	return v
}

// fail raises lua-cjson's parse error: exp was expected, tok was found.
func (d *jsonDecoder) fail(exp string, tok jsonToken) {
	found := jsonTokenNames[tok.typ]
	if tok.typ == tError {
		found = tok.str
	}
	luaRaise(d.L, "Expected "+exp+" but found "+found+" at character "+strconv.Itoa(tok.index+1))
}

func (d *jsonDecoder) errToken(msg string) jsonToken {
	return jsonToken{typ: tError, index: d.i, str: msg}
}

// next reads the next token.
func (d *jsonDecoder) next() jsonToken {
	for {
		if c := d.at(d.i); c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			break
		}
		d.i++
	}
	start := d.i
	c := d.at(d.i)
	if k := strings.IndexByte("{}[]:,", c); k >= 0 && c != 0 {
		d.i++
		return jsonToken{typ: []int{tObjBegin, tObjEnd, tArrBegin, tArrEnd, tColon, tComma}[k], index: start}
	}
	switch {
	case c == 0:
		return jsonToken{typ: tEnd, index: start}
	case c == '"':
		return d.string()
	case c == '-' || '0' <= c && c <= '9':
		if d.cfg.decodeInvalid == 0 && d.invalidNumber() {
			return d.errToken("invalid number")
		}
		return d.number()
	case strings.HasPrefix(d.s[d.i:], "true"):
		d.i += 4
		return jsonToken{typ: tBoolean, index: start, num: 1}
	case strings.HasPrefix(d.s[d.i:], "false"):
		d.i += 5
		return jsonToken{typ: tBoolean, index: start}
	case strings.HasPrefix(d.s[d.i:], "null"):
		d.i += 4
		return jsonToken{typ: tNull, index: start}
	case strings.IndexByte("fiInNt+", c) >= 0 && d.cfg.decodeInvalid != 0 && d.invalidNumber():
		return d.number()
	}
	return d.errToken("invalid token")
}

// invalidNumber is lua-cjson's test for what strict JSON refuses but strtod
// reads: a leading '+', "0x", leading zeros, inf and nan.
func (d *jsonDecoder) invalidNumber() bool {
	p := d.i
	if d.at(p) == '+' {
		return true
	}
	if d.at(p) == '-' {
		p++
	}
	if c := d.at(p); c == '0' {
		c2 := d.at(p + 1)
		return c2|0x20 == 'x' || '0' <= c2 && c2 <= '9'
	} else if c <= '9' {
		return false
	}
	rest := strings.ToLower(d.s[p:min(len(d.s), p+3)])
	return rest == "inf" || rest == "nan"
}

func (d *jsonDecoder) number() jsonToken {
	f, n := strtod(cString(d.s[d.i:]))
	if n == 0 {
		return d.errToken("invalid number")
	}
	tok := jsonToken{typ: tNumber, index: d.i, num: f}
	d.i += n
	return tok
}

func (d *jsonDecoder) string() jsonToken {
	start := d.i
	d.i++ // the quote
	d.tmp = d.tmp[:0]
	for {
		c := d.at(d.i)
		if c == '"' {
			break
		}
		if c == 0 {
			return d.errToken("unexpected end of string")
		}
		if c == '\\' {
			switch e := d.at(d.i + 1); e {
			case '"', '\\', '/':
				c = e
			case 'b':
				c = '\b'
			case 't':
				c = '\t'
			case 'n':
				c = '\n'
			case 'f':
				c = '\f'
			case 'r':
				c = '\r'
			case 'u':
				if !d.unicodeEscape() {
					return d.errToken("invalid unicode escape code")
				}
				continue
			default:
				return d.errToken("invalid escape code")
			}
			d.i++
		}
		d.tmp = append(d.tmp, c)
		d.i++
	}
	d.i++
	return jsonToken{typ: tString, index: start, str: string(d.tmp)}
}

// hex4 reads four hex digits at i, or returns -1.
func (d *jsonDecoder) hex4(i int) int {
	n := 0
	for k := range 4 {
		c := d.at(i + k)
		var v int
		switch {
		case '0' <= c && c <= '9':
			v = int(c - '0')
		case 'a' <= c|0x20 && c|0x20 <= 'f':
			v = int(c|0x20-'a') + 10
		default:
			return -1
		}
		n = n<<4 | v
	}
	return n
}

// unicodeEscape appends the character of the \uXXXX escape at d.i (a
// UTF-16 surrogate pair takes two) as UTF-8 and moves past it; false if it
// is not a valid one.
func (d *jsonDecoder) unicodeEscape() bool {
	cp := d.hex4(d.i + 2)
	if cp < 0 {
		return false
	}
	n := 6
	if cp&0xF800 == 0xD800 {
		if cp&0x400 != 0 || d.at(d.i+6) != '\\' || d.at(d.i+7) != 'u' {
			return false
		}
		low := d.hex4(d.i + 8)
		if low < 0 || low&0xFC00 != 0xDC00 {
			return false
		}
		cp = ((cp&0x3FF)<<10 | low&0x3FF) + 0x10000
		n = 12
	}
	switch {
	case cp <= 0x7F:
		d.tmp = append(d.tmp, byte(cp))
	case cp <= 0x7FF:
		d.tmp = append(d.tmp, byte(cp>>6|0xC0), byte(cp&0x3F|0x80))
	case cp <= 0xFFFF:
		d.tmp = append(d.tmp, byte(cp>>12|0xE0), byte(cp>>6&0x3F|0x80), byte(cp&0x3F|0x80))
	default:
		d.tmp = append(d.tmp, byte(cp>>18|0xF0), byte(cp>>12&0x3F|0x80), byte(cp>>6&0x3F|0x80), byte(cp&0x3F|0x80))
	}
	d.i += n
	return true
}

// descend enters an object or array that needs the given Lua stack slots
// on top of those the C decoder holds, refusing it past the depth limit or
// Lua's stack limit.
func (d *jsonDecoder) descend(slots, need int) {
	d.depth++
	if d.depth <= int(d.cfg.decodeMaxDepth) && slots+need <= maxLuaResults {
		return
	}
	luaRaise(d.L, "Found too many nested data structures ("+strconv.Itoa(d.depth)+") at character "+strconv.Itoa(d.i))
}

// first reads the first token inside an object or array, whose end is
// end; false (and the object or array left) if it is the end.
func (d *jsonDecoder) first(end int) (jsonToken, bool) {
	tok := d.next()
	if tok.typ == end {
		d.depth--
		return tok, false
	}
	return tok, true
}

// more reads what follows a member of an object or array: false (and the
// object or array left) at its end, else a comma, and returns the token
// after it.
func (d *jsonDecoder) more(end int, expected string) (jsonToken, bool) {
	tok := d.next()
	if tok.typ == end {
		d.depth--
		return tok, false
	}
	if tok.typ != tComma {
		d.fail(expected, tok)
	}
	return d.next(), true
}

// value converts the value that starts with tok; slots is how many Lua
// stack slots the C decoder holds while it does.
func (d *jsonDecoder) value(tok jsonToken, slots int) lua.LValue {
	d.step(d.L, 0, "decoding JSON")
	switch tok.typ {
	case tString:
		return lua.LString(tok.str)
	case tNumber:
		return lua.LNumber(tok.num)
	case tBoolean:
		return lua.LBool(tok.num != 0)
	case tNull:
		return d.null
	case tObjBegin:
		d.descend(slots, 3)
		t := d.L.NewTable()
		for tok, ok := d.first(tObjEnd); ok; tok, ok = d.more(tObjEnd, "comma or object end") {
			if tok.typ != tString {
				d.fail("object key string", tok)
			}
			key := tok.str
			if tok = d.next(); tok.typ != tColon {
				d.fail("colon", tok)
			}
			t.RawSetString(key, d.value(d.next(), slots+2))
		}
		return t
	case tArrBegin:
		d.descend(slots, 2)
		t := d.L.NewTable()
		i := 0
		for tok, ok := d.first(tArrEnd); ok; tok, ok = d.more(tArrEnd, "comma or array end") {
			i++
			t.RawSetInt(i, d.value(tok, slots+1))
		}
		return t
	}
	d.fail("value", tok)
	return nil
}
