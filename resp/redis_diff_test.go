package resp_test

// Differential testing against a real redis-server: random command streams
// (strings, keys, TTLs, databases, transactions, the lock scripts of
// redislock and redsync, Lua edge cases, bad input) are sent over raw TCP to
// redis-server and to nxkv's server, in RESP2 and in RESP3, and the raw
// reply bytes are compared. Only replies that depend on the instant a clock
// is read (PTTL and the like) are compared with a tolerance, and only
// replies that cannot agree (server ids, TIME) are left out.

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nxkv/nxkv/internal/redistest"
	"github.com/nxkv/nxkv/resp"
)

// rawConn is a raw RESP connection that sends commands and returns the
// exact reply bytes.
type rawConn struct{ *redistest.Conn }

func dialRaw(t testing.TB, addr string) *rawConn { return &rawConn{redistest.Dial(t, addr)} }

// do sends one command and returns its reply's bytes.
func (rc *rawConn) do(args []string) ([]byte, error) { return rc.Do(args) }

// encode returns args as a RESP multibulk request.
func encode(args []string) []byte { return redistest.Encode(args) }

// readReply reads one complete RESP2/RESP3 reply and returns its bytes.
func readReply(br *bufio.Reader) ([]byte, error) { return redistest.ReadReply(br) }

// tokens splits a reply into its lines, for comparisons with a tolerance.
func tokens(b []byte) []string {
	return strings.Split(strings.TrimSuffix(string(b), "\r\n"), "\r\n")
}

// closeEnough compares replies of a time-dependent command: equal except
// for integers within tol of each other.
func closeEnough(a, b []byte, tol int64) bool {
	ta, tb := tokens(a), tokens(b)
	if len(ta) != len(tb) {
		return false
	}
	for i := range ta {
		if ta[i] == tb[i] {
			continue
		}
		if !strings.HasPrefix(ta[i], ":") || !strings.HasPrefix(tb[i], ":") {
			return false
		}
		x, err1 := strconv.ParseInt(ta[i][1:], 10, 64)
		y, err2 := strconv.ParseInt(tb[i][1:], 10, 64)
		if err1 != nil || err2 != nil || x-y > tol || y-x > tol {
			return false
		}
	}
	return true
}

// step is one generated command and how to compare its reply.
type step struct {
	args []string
	tol  int64 // > 0: a time-dependent reply, integers may differ by tol
	skip bool  // the replies cannot agree (ids, the time): not compared
	// sorted: an array whose order is the server's own (KEYS): compared
	// sorted.
	sorted bool
	// scan: a SCAN from cursor 0, run to completion on each server; the
	// sets of keys returned are compared.
	scan bool
	// nullness: a reply chosen at random (RANDOMKEY): only whether it is
	// nil is compared.
	nullness bool
	// shape: a reply of random elements (HRANDFIELD with a count): only
	// its number of lines and its header are compared.
	shape bool
	// scanKey: an HSCAN, SSCAN or ZSCAN from cursor 0, run to completion
	// on each server; the sorted elements returned are compared.
	scanKey bool
	// encoding: OBJECT ENCODING, where a string's encodings (int,
	// embstr, raw) count as one: nxkv names a string's by its length
	// only, Redis by how the string was built.
	encoding bool
}

// sortedElems returns an array reply's element lines sorted, after its
// header line.
func sortedElems(b []byte) string {
	t := tokens(b)
	if len(t) == 0 || !strings.HasPrefix(t[0], "*") && !strings.HasPrefix(t[0], "~") {
		return string(b)
	}
	var elems []string
	for i := 1; i+1 < len(t); i += 2 {
		elems = append(elems, t[i]+"\r\n"+t[i+1])
	}
	sort.Strings(elems)
	return t[0] + "|" + strings.Join(elems, "|")
}

// scanAll runs SCAN from cursor 0 to the end and returns the sorted distinct
// keys, or the first reply if it is not a SCAN page (an error).
func scanAll(c *rawConn, args []string) (string, error) {
	seen := map[string]bool{}
	cursor := "0"
	for range 10000 {
		a := append([]string{"scan", cursor}, args[2:]...)
		r, err := c.do(a)
		if err != nil {
			return "", err
		}
		t := tokens(r)
		if !strings.HasPrefix(t[0], "*2") {
			return string(r), nil
		}
		cursor = t[2]
		for i := 4; i+1 < len(t); i += 2 {
			seen[t[i+1]] = true
		}
		if cursor == "0" {
			break
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ","), nil
}

// Scripts of the lock clients the differential test replays.
var lockScripts = []string{
	// bsm/redislock v0.9.4: obtain, refresh, release, pttl.
	`if redis.call("set", KEYS[1], ARGV[1], "NX", "PX", ARGV[3]) then return redis.status_reply("OK") end

local offset = tonumber(ARGV[2])
if redis.call("getrange", KEYS[1], 0, offset-1) == string.sub(ARGV[1], 1, offset) then return redis.call("set", KEYS[1], ARGV[1], "PX", ARGV[3]) end
`,
	`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) else return 0 end`,
	`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`,
	`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pttl", KEYS[1]) else return -3 end`,
	// go-redsync/redsync v4: delete, touch with SET NX fallback, touch.
	`
	local val = redis.call("GET", KEYS[1])
	if val == ARGV[1] then
		return redis.call("DEL", KEYS[1])
	elseif val == false then
		return -1
	else
		return 0
	end
`,
	`
	if redis.call("GET", KEYS[1]) == ARGV[1] then
		return redis.call("PEXPIRE", KEYS[1], ARGV[2])
	elseif redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2], "NX") then
		return 1
	else
		return 0
	end
`,
	`
	if redis.call("GET", KEYS[1]) == ARGV[1] then
		return redis.call("PEXPIRE", KEYS[1], ARGV[2])
	else
		return 0
	end
`,
}

// Lua edge cases: conversions both ways, errors and their wording.
var edgeScripts = []string{
	`return 1.9`, `return -0.5`, `return 1e20`, `return 0/0`, `return true`, `return false`, `return nil`,
	`return {1,2,nil,3}`, `return {1,'a',{2,false,true},3.7,-2.5}`, `local t={} t[1]=1 t[3]=3 return t`,
	`return {err='My Error'}`, `return {ok='fine'}`, `return {ok=1}`, `return {err=1}`,
	`return redis.error_reply('My Error')`, `return redis.error_reply('-X My Error')`, `return redis.error_reply('NoSpace')`,
	`return redis.error_reply(1)`, `return redis.status_reply('fine')`, `return redis.status_reply()`,
	`return {err='-X'}`, `return {err='--X y'}`, `return {err=''}`, `return {err='-'}`,
	`return redis.call('incr', KEYS[1])`, `return redis.pcall('incr', KEYS[1])`,
	`return x`, `x = 1`, `string.x = 1`,
	`rawset(_G, 'y', 1) return y`, `return _G.y`, `return redis.call('nosuch')`, `return redis.pcall('nosuch')`,
	`return redis.call('get')`, `return redis.call()`, `return redis.call('multi')`, `return redis.call('exec')`,
	`return redis.call('client', 'id')`, `return redis.sha1hex('abc')`, `return redis.sha1hex()`,
	`error('boom')`, `error({err='tbl'})`, `error(123)`, `error('x', 0)`,
	`return redis.call('get', {})`, `return redis.pcall('get', {})`, `return redis.call('get', nil)`,
	`return redis.call('ping')`, `return type(redis.call('ping'))`, `return redis.call('ping').ok`,
	`return {redis.call('mget', KEYS[1], 'nokey')}`, `return redis.call('set', KEYS[1], 'v', 'get')`,
	`redis.call('set', KEYS[1], 0.1) return redis.call('get', KEYS[1])`,
	`redis.call('set', KEYS[1], 1e20) return redis.call('get', KEYS[1])`,
	`redis.call('set', KEYS[1], -3.5) return redis.call('get', KEYS[1])`,
	`return redis.call('set', KEYS[1], 'v', 'ex', 0)`, `return redis.setresp(4)`, `return redis.setresp()`,
	`redis.setresp(3) return true`, `redis.setresp(3) return redis.call('get', 'nokey')`,
	`return {double=1.5}`, `return {map={a=1}}`, `redis.setresp(3) return {map={a=1}}`,
	`return #KEYS + #ARGV`, `return KEYS[1] .. (ARGV[1] or '')`, `return tonumber('x')`,
	`return loadstring('return 1')()`, `return type(print)`, `return type(getfenv)`, `return bit.band(7, 3)`,
	`return redis.call('incrbyfloat', KEYS[1], '0.1')`, `return redis.call('getrange', KEYS[1], 0, -1)`,
	`return redis.call('exists', KEYS[1], KEYS[1])`, `return redis.call('ttl', KEYS[1])`,
	`return redis.REDIS_VERSION`,
}

// gen generates random command streams over a few keys.
type gen struct {
	r    *rand.Rand
	now  time.Time
	shas []string
}

func (g *gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g *gen) key() string { return "k" + strconv.Itoa(g.r.IntN(5)) }

// boundaries are integers at the edges of C's and Go's integer types and
// their neighbours, where sums and conversions overflow.
var boundaries = []string{
	"0", "-1",
	"2147483647", "2147483648", "-2147483648", "-2147483649",
	"4294967295", "4294967296", "-4294967296",
	"9223372036854775806", "9223372036854775807", "9223372036854775808",
	"-9223372036854775807", "-9223372036854775808", "-9223372036854775809",
}

// bound returns an integer argument: usually a small one, sometimes one of
// the boundaries.
func (g *gen) bound(small ...string) string {
	if g.r.IntN(3) == 0 {
		return boundaries[g.r.IntN(len(boundaries))]
	}
	return g.pick(small...)
}

func (g *gen) val() string {
	return g.pick("v", "1", "-5", "10.5", "0.1", "", "9223372036854775807", "abc", "tok1", "tok2", "0", "-0", "01", " 1")
}

// ttl returns relative TTLs that never expire during a stream (or are
// invalid), in seconds or milliseconds.
func (g *gen) ttl(ms bool) string {
	if ms {
		return g.pick("100000", "250000", "0", "-1", "x", "9223372036854775807", "1.5")
	}
	return g.pick("100", "250", "0", "-1", "x", "9223372036854775", "1.5")
}

// at returns absolute deadlines: far enough ahead, in the past, or invalid.
func (g *gen) at(ms bool) string {
	var t time.Time
	switch g.r.IntN(5) {
	case 0:
		t = g.now.Add(-time.Hour)
	case 1:
		return g.pick("0", "-1", "x")
	default:
		t = g.now.Add(time.Duration(100+g.r.IntN(200)) * time.Second)
	}
	if ms {
		return strconv.FormatInt(t.UnixMilli(), 10)
	}
	return strconv.FormatInt(t.Unix(), 10)
}

// lockArgs returns ARGV for lock script i: a token, then the prefix length
// (redislock's obtain) or a TTL in ms (the others), then a TTL. TTLs are
// long, zero or negative, never a few ms that could run out between the
// two servers' commands.
func (g *gen) lockArgs(i int) []string {
	second := g.pick("100000", "0", "-1")
	if i == 0 {
		second = g.pick("4", "0", "2", "100")
	}
	return []string{g.pick("tok1", "tok2"), second, g.pick("200000", "100000")}
}

func (g *gen) step() step {
	if g.r.IntN(2) == 0 {
		return g.typedStep()
	}
	k, v := g.key(), g.val()
	s := func(args ...string) step { return step{args: args} }
	timed := func(tol int64, args ...string) step { return step{args: args, tol: tol} }
	switch g.r.IntN(53) {
	case 0:
		return s("get", k)
	case 1:
		args := []string{"set", k, v}
		for range g.r.IntN(4) {
			switch g.r.IntN(10) {
			case 0:
				args = append(args, g.pick("nx", "NX", "xx"))
			case 1:
				args = append(args, "get")
			case 2:
				args = append(args, "ex", g.ttl(false))
			case 3:
				args = append(args, "px", g.ttl(true))
			case 4:
				args = append(args, "exat", g.at(false))
			case 5:
				args = append(args, "pxat", g.at(true))
			case 6:
				args = append(args, "keepttl")
			case 7:
				args = append(args, g.pick("ex", "foo", "px"))
			default:
				args = append(args, g.pick("nx", "xx", "get"))
			}
		}
		return s(args...)
	case 2:
		return s("setnx", k, v)
	case 3:
		cmd := g.pick("setex", "psetex")
		return s(cmd, k, g.ttl(cmd == "psetex"), v)
	case 4:
		return s("getset", k, v)
	case 5:
		return s("getdel", k)
	case 6:
		args := []string{"getex", k}
		switch g.r.IntN(7) {
		case 0:
			args = append(args, "ex", g.ttl(false))
		case 1:
			args = append(args, "px", g.ttl(true))
		case 2:
			args = append(args, "exat", g.at(false))
		case 3:
			args = append(args, "pxat", g.at(true))
		case 4:
			args = append(args, "persist")
		case 5:
			args = append(args, g.pick("foo", "ex", "persist"), g.pick("ex", "10", "persist"))
		}
		return s(args...)
	case 7:
		return s("mget", k, g.key(), g.key())
	case 8:
		if g.r.IntN(4) == 0 {
			return s(g.pick("mset", "msetnx"), k)
		}
		return s(g.pick("mset", "msetnx"), k, v, g.key(), g.val())
	case 9:
		return s("getrange", k, g.bound("0", "1", "-1", "-3", "5", "x"), g.bound("0", "-1", "2", "-10", "100"))
	case 10:
		return s("setrange", k, g.bound("0", "2", "-1", "10", "x"), g.pick("ab", "", "xyz"))
	case 11:
		return s("strlen", k)
	case 12:
		return s("append", k, g.pick("ab", "", "1"))
	case 13:
		return s(g.pick("incr", "decr"), k)
	case 14:
		return s(g.pick("incrby", "decrby"), k, g.bound("1", "-1", "100", "x", "01"))
	case 15:
		return s("incrbyfloat", k, g.pick("0.1", "0.2", "-1.5", "1e3", "x", "inf", "1e4000", "3.0e2", " 1", "0x10", "1.23456789012345678901"))
	case 16:
		return s(g.pick("del", "unlink"), k, g.key())
	case 17:
		return s("exists", k, k, g.key())
	case 18:
		return s("type", k)
	case 19:
		return s(g.pick("rename", "renamenx"), k, g.key())
	case 20:
		args := []string{"copy", k, g.key()}
		if g.r.IntN(2) == 0 {
			args = append(args, "replace")
		}
		if g.r.IntN(4) == 0 {
			args = append(args, g.pick("foo", "db"))
		}
		return s(args...)
	case 21, 22:
		cmd := g.pick("expire", "pexpire")
		args := []string{cmd, k, g.ttl(cmd == "pexpire")}
		for range g.r.IntN(3) {
			args = append(args, g.pick("nx", "xx", "gt", "lt", "foo"))
		}
		return s(args...)
	case 23:
		cmd := g.pick("expireat", "pexpireat")
		args := []string{cmd, k, g.at(cmd == "pexpireat")}
		if g.r.IntN(2) == 0 {
			args = append(args, g.pick("nx", "xx", "gt", "lt"))
		}
		return s(args...)
	case 24:
		return timed(1, "ttl", k)
	case 25:
		return timed(200, "pttl", k)
	case 26:
		return timed(1, "expiretime", k)
	case 27:
		return timed(200, "pexpiretime", k)
	case 28:
		return s("persist", k)
	case 29:
		return s("getrange", k, "0", "-1")
	case 30:
		return s("select", g.bound("0", "1", "16", "x", "-1"))
	case 31:
		return s("move", k, g.bound("0", "1", "16", "x"))
	case 32:
		return s("ping")
	case 33:
		return s("echo", v)
	case 34, 35, 36:
		i := g.r.IntN(len(lockScripts))
		return timed(200, append([]string{"eval", lockScripts[i], "1", k}, g.lockArgs(i)...)...)
	case 37, 38:
		return timed(200, "eval", edgeScripts[g.r.IntN(len(edgeScripts))], "1", k, v)
	case 39:
		if len(g.shas) > 0 && g.r.IntN(3) > 0 {
			i := g.r.IntN(len(g.shas))
			return timed(200, append([]string{"evalsha", g.shas[i], "1", k}, g.lockArgs(i)...)...)
		}
		return s("evalsha", g.pick("ffffffffffffffffffffffffffffffffffffffff", "fff"), "0")
	case 40:
		return s("eval", "return 1", g.pick("-1", "2", "x"), "a")
	case 41:
		return s(g.pick("nosuch", "FOO", "getx"), k, v)
	case 42:
		return s(g.pick("get", "set", "expire", "ttl", "mget", "eval", "incrby"))
	case 43:
		return s("script", "exists", g.pick(g.shas...), strings.ToUpper(g.pick(g.shas...)), "abc")
	case 44:
		// Redis counts expired keys until it reclaims them, at a time of
		// its own choosing: DBSIZE cannot be compared (unit tests check it).
		return step{args: []string{"dbsize"}, skip: true}
	case 45:
		return s(g.pick("client", "config", "script"), g.pick("foo", "setname"))
	case 46:
		if g.r.IntN(3) == 0 {
			return s(g.pick("flushdb", "flushall"), g.pick("async", "sync", "foo"))
		}
		return step{args: []string{"keys", g.pick("*", "k*", "k[0-2]", "k?", "*1", "k[^1]", "k\\1", "[", "k[", "*[2-", "")}, sorted: true}
	case 47:
		args := []string{"scan", "0"}
		if g.r.IntN(2) == 0 {
			args = append(args, "match", g.pick("*", "k[1-3]", "x*"))
		}
		if g.r.IntN(2) == 0 {
			args = append(args, "count", g.bound("1", "3", "100", "0", "x"))
		}
		if g.r.IntN(4) == 0 {
			args = append(args, "type", g.pick("string", "hash", "STRING"))
		}
		return step{args: args, scan: true}
	case 49:
		return step{args: []string{"randomkey"}, nullness: true}
	case 50:
		return s("swapdb", g.bound("0", "1", "2", "x"), g.bound("0", "1", "16"))
	case 51:
		args := []string{"lcs", k, g.key()}
		for range g.r.IntN(4) {
			switch g.r.IntN(5) {
			case 0:
				args = append(args, "minmatchlen", g.bound("0", "1", "2", "x"))
			default:
				args = append(args, g.pick("len", "idx", "withmatchlen", "IDX", "foo"))
			}
		}
		return s(args...)
	case 52:
		return g.bitStep(k)
	default:
		return s("hello", g.pick("2", "3", "4", "x"), g.pick("foo", "setname"))
	}
}

// bitStep returns a bitmap command on k. Offsets stay small (or past the
// largest string): an offset near 2^32 is valid and would make both
// servers build a 512 MB value.
func (g *gen) bitStep(k string) step {
	off := func() string { return g.pick("0", "1", "7", "8", "15", "100", "-1", "x", "4294967296") }
	idx := func() string { return g.bound("0", "1", "-1", "2", "-3", "10", "x") }
	s := func(args ...string) step { return step{args: args} }
	switch g.r.IntN(6) {
	case 0:
		return s("setbit", k, off(), g.pick("0", "1", "1", "2", "-1", "x"))
	case 1:
		return s("getbit", k, off())
	case 2:
		args := []string{"bitcount", k}
		if g.r.IntN(3) > 0 {
			args = append(args, idx(), idx())
			if g.r.IntN(2) == 0 {
				args = append(args, g.pick("bit", "BYTE", "foo"))
			}
		}
		return s(args...)
	case 3:
		args := []string{"bitpos", k, g.pick("0", "1", "2", "x")}
		for range g.r.IntN(4) {
			args = append(args, idx())
		}
		if len(args) == 6 {
			args[5] = g.pick("bit", "byte", "x")
		}
		return s(args...)
	case 4:
		args := []string{"bitop", g.pick("and", "OR", "xor", "not", "foo"), g.key(), k}
		for range g.r.IntN(3) {
			args = append(args, g.key())
		}
		return s(args...)
	default:
		args := []string{g.pick("bitfield", "bitfield", "bitfield_ro"), k}
		for range 1 + g.r.IntN(4) {
			typ := g.pick("u8", "i8", "u1", "i64", "u63", "i5", "u64", "x")
			bitOff := g.pick("0", "3", "#1", "#2", "100", "-1", "x")
			switch g.r.IntN(4) {
			case 0:
				args = append(args, "get", typ, bitOff)
			case 1:
				args = append(args, "set", typ, bitOff, g.bound("0", "1", "100", "255", "-1", "-128", "x"))
			case 2:
				args = append(args, "incrby", typ, bitOff, g.bound("1", "-1", "200", "-300", "x"))
			default:
				args = append(args, "overflow", g.pick("wrap", "SAT", "fail", "foo"))
			}
		}
		return s(args...)
	}
}

// stream returns n random steps, with transactions mixed in.
func (g *gen) stream(n int) []step {
	var out []step
	for len(out) < n {
		if g.r.IntN(12) == 0 {
			out = append(out, step{args: []string{"multi"}})
			for range 1 + g.r.IntN(4) {
				st := g.step()
				for st.scan || st.sorted || st.nullness || st.shape || st.scanKey || st.encoding { // their order or choice cannot be compared inside EXEC
					st = g.step()
				}
				out = append(out, st)
			}
			if g.r.IntN(5) == 0 {
				out = append(out, step{args: []string{"discard"}})
			} else {
				out = append(out, step{args: []string{"exec"}, tol: 200})
			}
			continue
		}
		st := g.step()
		if st.args[0] == "hello" && len(st.args) > 1 && st.args[1] != "x" && st.args[1] != "4" {
			st.skip = true // carries the connection id
			if st.args[2] == "setname" {
				st.args = st.args[:2] // keep the reply shape comparable
			}
		}
		out = append(out, st)
	}
	return out
}

// diff runs steps on both servers and returns a description of the first
// difference, or "".
func diff(t testing.TB, redisAddr, nxkvAddr string, steps []step, resp3 bool) string {
	t.Helper()
	a, b := dialRaw(t, redisAddr), dialRaw(t, nxkvAddr)
	var log []string
	if resp3 {
		steps = append([]step{{args: []string{"hello", "3"}, skip: true}}, steps...)
	}
	for _, st := range steps {
		if st.scanKey {
			ka, err := scanKeyAll(a, st.args)
			if err != nil {
				return fmt.Sprintf("redis: %q: %v", st.args, err)
			}
			kb, err := scanKeyAll(b, st.args)
			if err != nil {
				return fmt.Sprintf("nxkv: %q: %v", st.args, err)
			}
			if ka != kb {
				return fmt.Sprintf("full %q\nredis-server: %s\nnxkv-server:  %s", st.args, ka, kb)
			}
			continue
		}
		if st.scan {
			ka, err := scanAll(a, st.args)
			if err != nil {
				return fmt.Sprintf("redis: %q: %v", st.args, err)
			}
			kb, err := scanAll(b, st.args)
			if err != nil {
				return fmt.Sprintf("nxkv: %q: %v", st.args, err)
			}
			if ka != kb {
				return fmt.Sprintf("full %q\nredis-server: %s\nnxkv-server:  %s", st.args, ka, kb)
			}
			continue
		}
		ra, err := a.do(st.args)
		if err != nil {
			return fmt.Sprintf("redis: %q: %v", st.args, err)
		}
		rb, err := b.do(st.args)
		if err != nil {
			return fmt.Sprintf("nxkv: %q: %v", st.args, err)
		}
		log = append(log, fmt.Sprintf("%q -> %q", st.args, ra))
		if len(log) > 8 {
			log = log[1:]
		}
		if st.skip || bytes.Equal(ra, rb) || (st.tol > 0 && closeEnough(ra, rb, st.tol)) ||
			(st.sorted && sortedElems(ra) == sortedElems(rb)) ||
			(st.nullness && isNull(ra) == isNull(rb) && ra[0] == rb[0]) ||
			(st.shape && sameShape(ra, rb)) ||
			(st.encoding && stringEncoding(ra) == stringEncoding(rb)) {
			continue
		}
		return fmt.Sprintf("command %q\nredis-server: %q\nnxkv-server:  %q\nrecent commands (redis replies):\n  %s",
			st.args, ra, rb, strings.Join(log, "\n  "))
	}
	return ""
}

// isNull reports whether a reply is RESP2's or RESP3's null.
func isNull(b []byte) bool {
	return string(b) == "$-1\r\n" || string(b) == "_\r\n" || string(b) == "*-1\r\n"
}

// startPair starts a redis-server and an nxkv server, and loads the lock
// scripts into both.
func startPair(t *testing.T, opts resp.Options) (redisAddr, nxkvAddr string, shas []string) {
	t.Helper()
	rs := redistest.Start(t)
	ns := resp.NewT(t, opts)
	for _, addr := range []string{rs.Addr, ns.Addr()} {
		c := dialRaw(t, addr)
		for _, src := range lockScripts {
			r, err := c.do([]string{"script", "load", src})
			if err != nil || r[0] != '$' {
				t.Fatalf("script load on %s: %q %v", addr, r, err)
			}
			if addr == rs.Addr {
				shas = append(shas, string(tokens(r)[1]))
			}
		}
	}
	return rs.Addr, ns.Addr(), shas
}

// flushBoth empties both servers between streams.
func flushBoth(t *testing.T, addrs ...string) {
	t.Helper()
	for _, addr := range addrs {
		if r, err := dialRaw(t, addr).do([]string{"flushall"}); err != nil || string(r) != "+OK\r\n" {
			t.Fatalf("flushall on %s: %q %v", addr, r, err)
		}
	}
}

// diffStreams returns the seed of a random differential test's streams (a
// new one each run, or NXKV_DIFF_SEED's) and the streams to run: n (short
// of them with -short), or only NXKV_DIFF_STREAM's, so that a failure can
// be replayed; only reports that one stream was asked for.
func diffStreams(n, short int) (seed uint64, streams []int, only bool) {
	seed = uint64(time.Now().UnixNano())
	if s := os.Getenv("NXKV_DIFF_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	if s := os.Getenv("NXKV_DIFF_STREAM"); s != "" {
		i, _ := strconv.Atoi(s)
		return seed, []int{i}, true
	}
	if testing.Short() {
		n = short
	}
	for i := range n {
		streams = append(streams, i)
	}
	return seed, streams, false
}

// TestRedisDifferential compares raw reply bytes of random streams in RESP2
// and RESP3.
func TestRedisDifferential(t *testing.T) {
	redisAddr, nxkvAddr, shas := startPair(t, resp.Options{})
	seed, streams, only := diffStreams(40, 8)
	const length = 150
	for _, i := range streams {
		g := &gen{r: rand.New(rand.NewPCG(seed, uint64(i))), now: time.Now(), shas: shas}
		steps := g.stream(length)
		resp3 := i%2 == 1
		if d := diff(t, redisAddr, nxkvAddr, steps, resp3); d != "" {
			if only {
				for _, st := range steps {
					t.Logf("%q", st.args)
				}
			}
			t.Fatalf("stream %d (seed %d, resp3 %v; rerun with NXKV_DIFF_SEED=%d NXKV_DIFF_STREAM=%d): %s",
				i, seed, resp3, seed, i, d)
		}
		flushBoth(t, redisAddr, nxkvAddr)
	}
}

// TestRedisDifferentialCatchesPlantedBug shows the comparison fails when
// nxkv's replies change: a fault makes INCR reply an error.
func TestRedisDifferentialCatchesPlantedBug(t *testing.T) {
	rs := redistest.Start(t)
	ns := resp.RunT(t)
	steps := []step{{args: []string{"set", "k", "1"}}, {args: []string{"incr", "k"}}}
	if d := diff(t, rs.Addr, ns.Addr(), steps, false); d != "" {
		t.Fatalf("before planting: %s", d)
	}
	ns.InjectFault(resp.Fault{Command: "incr", Err: "ERR planted"})
	if d := diff(t, rs.Addr, ns.Addr(), steps, false); d == "" {
		t.Fatal("diff found no difference with a planted bug")
	}
}

// boundaryCommands are commands with an integer argument, written with N in
// its place; each runs with every boundary, on a key that holds "abc" with a
// TTL and on a missing one.
var boundaryCommands = [][]string{
	{"setrange", "k", "N", "AB"}, {"setrange", "k", "N", ""}, {"setrange", "missing", "N", "AB"},
	{"getrange", "k", "N", "-1"}, {"getrange", "k", "0", "N"}, {"getrange", "k", "N", "N"},
	{"incrby", "n", "N"}, {"decrby", "n", "N"}, {"incrby", "missing", "N"}, {"decrby", "missing", "N"},
	{"expire", "k", "N"}, {"pexpire", "k", "N"}, {"expireat", "k", "N"}, {"pexpireat", "k", "N"},
	{"expire", "k", "N", "gt"}, {"pexpire", "k", "N", "lt"},
	{"setex", "k", "N", "v"}, {"psetex", "k", "N", "v"},
	{"set", "k", "v", "ex", "N"}, {"set", "k", "v", "px", "N"}, {"set", "k", "v", "exat", "N"}, {"set", "k", "v", "pxat", "N"},
	{"getex", "k", "ex", "N"}, {"getex", "k", "px", "N"}, {"getex", "k", "exat", "N"}, {"getex", "k", "pxat", "N"},
	{"select", "N"}, {"move", "k", "N"}, {"copy", "k", "k2", "db", "N"},
	{"scan", "N"}, {"scan", "0", "count", "N"},
	{"eval", "return 1", "N"}, {"evalsha", "ffffffffffffffffffffffffffffffffffffffff", "N"},
	{"hello", "N"}, {"client", "kill", "id", "N"}, {"client", "no-evict", "N"},
	{"object", "freq", "N"}, {"lcs", "k", "k2", "minmatchlen", "N"},
	{"swapdb", "N", "1"}, {"swapdb", "0", "N"},
	// Bitmaps: offsets only where they read (a valid offset near 2^32 makes
	// a 512 MB value), values and ranges everywhere.
	{"getbit", "k", "N"}, {"setbit", "k", "0", "N"}, {"setbit", "k", "4294967296", "N"},
	{"bitcount", "k", "N", "-1"}, {"bitcount", "k", "0", "N", "bit"}, {"bitcount", "k", "N", "N", "byte"},
	{"bitpos", "k", "N"}, {"bitpos", "k", "1", "N"}, {"bitpos", "k", "0", "0", "N", "bit"}, {"bitpos", "k", "1", "N", "N", "byte"},
	{"bitfield", "k", "set", "i64", "0", "N"}, {"bitfield", "k", "incrby", "i64", "0", "N"},
	{"bitfield", "k", "overflow", "sat", "incrby", "u63", "1", "N"}, {"bitfield", "k", "overflow", "fail", "incrby", "i7", "3", "N"},
	{"bitfield", "k", "overflow", "wrap", "set", "u9", "#1", "N"}, {"bitfield_ro", "k", "get", "u8", "N"},
	{"bitfield_ro", "k", "get", "i8", "#N"}, {"bitfield", "k", "get", "u32", "#N"},
	// Typed values (l, z, h and s hold a list, a sorted set, a hash and an
	// intset; k, a string, makes the blocking pops reply at once). The
	// counts of HRANDFIELD, SRANDMEMBER and ZRANDMEMBER are left out: a
	// negative one near -2^31 makes Redis build billions of elements.
	{"lrange", "l", "N", "-1"}, {"lrange", "l", "0", "N"}, {"lindex", "l", "N"}, {"lset", "l", "N", "x"},
	{"lrem", "l", "N", "a"}, {"ltrim", "l", "N", "N"}, {"lpos", "l", "a", "rank", "N"}, {"lpos", "l", "a", "count", "N"},
	{"lpos", "l", "a", "maxlen", "N"}, {"lpop", "l", "N"}, {"rpop", "l", "N"}, {"lmpop", "N", "l", "left"},
	{"lmpop", "1", "l", "left", "count", "N"}, {"blpop", "k", "N"}, {"blmpop", "N", "1", "k", "left"},
	{"blmpop", "0", "N", "k", "left"}, {"blmove", "k", "l2", "left", "left", "N"}, {"bzpopmin", "k", "N"},
	{"bzmpop", "N", "1", "k", "min"}, {"hincrby", "h", "f", "N"}, {"spop", "s", "N"}, {"sintercard", "N", "s"},
	{"sintercard", "1", "s", "limit", "N"}, {"zrange", "z", "N", "N"}, {"zrangebyscore", "z", "-inf", "+inf", "limit", "N", "N"},
	{"zrange", "z", "-inf", "+inf", "byscore", "limit", "0", "N"}, {"zremrangebyrank", "z", "N", "N"}, {"zpopmin", "z", "N"},
	{"zmpop", "N", "z", "min"}, {"zmpop", "1", "z", "min", "count", "N"}, {"zunionstore", "d", "N", "z"},
	{"zunion", "N", "z"}, {"zintercard", "N", "z"}, {"zadd", "z", "N", "m"}, {"zincrby", "z", "N", "a"},
	{"hscan", "h", "N"}, {"sscan", "s", "0", "count", "N"}, {"zscan", "z", "N"}, {"client", "unblock", "N"},
}

// TestRedisIntegerBoundaries runs every command above with integers at the
// edges of C's and Go's integer types (SETRANGE with an offset near 2^63
// once crashed the server) and compares the replies byte for byte, and the
// state they leave. Commands nxkv does not have are skipped; a deadline past
// the year 2262 must get nxkv's documented error; SCAN cursors are the
// servers' own, so only the reply's kind is compared for SCAN.
func TestRedisIntegerBoundaries(t *testing.T) {
	redisAddr, nxkvAddr, _ := startPair(t, resp.Options{})
	a, b := dialRaw(t, redisAddr), dialRaw(t, nxkvAddr)
	setup := []step{{args: []string{"set", "k", "abc", "ex", "1000"}}, {args: []string{"set", "n", "5"}},
		{args: []string{"rpush", "l", "a", "b", "a", "c"}}, {args: []string{"zadd", "z", "1", "a", "2", "b", "3", "c"}},
		{args: []string{"hset", "h", "f", "1", "g", "2"}}, {args: []string{"sadd", "s", "1", "2", "3"}}}
	after := []step{
		{args: []string{"get", "k"}}, {args: []string{"pttl", "k"}, tol: 200}, {args: []string{"get", "n"}},
		{args: []string{"exists", "k2"}}, {args: []string{"select", "0"}}, {args: []string{"lrange", "l", "0", "-1"}},
		{args: []string{"zrange", "z", "0", "-1", "withscores"}}, {args: []string{"hgetall", "h"}},
		{args: []string{"smembers", "s"}}, {args: []string{"zrange", "d", "0", "-1", "withscores"}},
	}
	unknown := 0
	for _, tmpl := range boundaryCommands {
		for _, n := range boundaries {
			args := make([]string, len(tmpl))
			for i, x := range tmpl {
				if x == "N" {
					x = n
				}
				args[i] = x
			}
			flushBoth(t, redisAddr, nxkvAddr)
			if d := diff(t, redisAddr, nxkvAddr, setup, false); d != "" {
				t.Fatalf("setup: %s", d)
			}
			ra, err := a.do(args)
			if err != nil {
				t.Fatalf("redis: %q: %v", args, err)
			}
			rb, err := b.do(args)
			if err != nil {
				t.Fatalf("nxkv: %q: %v (did the server crash?)", args, err)
			}
			switch {
			case bytes.HasPrefix(rb, []byte("-ERR unknown command")) || bytes.HasPrefix(rb, []byte("-ERR unknown subcommand")):
				unknown++
				continue
			case string(rb) == "-ERR expire time beyond the year 2262 is not supported\r\n":
				if !beyond2262(args) {
					t.Errorf("%q: nxkv refused a deadline before 2262: %q (redis: %q)", args, rb, ra)
				}
				continue
			case args[0] == "scan":
				if ra[0] != rb[0] || (ra[0] == '-' && !bytes.Equal(ra, rb)) {
					t.Errorf("%q:\nredis-server: %q\nnxkv-server:  %q", args, ra, rb)
				}
				continue
			case !bytes.Equal(ra, rb) && !closeEnough(ra, rb, 200):
				t.Errorf("%q:\nredis-server: %q\nnxkv-server:  %q", args, ra, rb)
				continue
			}
			if d := diff(t, redisAddr, nxkvAddr, after, false); d != "" {
				t.Errorf("after %q: %s", args, d)
			}
		}
	}
	t.Logf("%d cases skipped: commands nxkv does not have", unknown)
}

// beyond2262 reports whether a command's absolute deadline lies past the
// engine's range (nxkv's documented deviation).
func beyond2262(args []string) bool {
	const maxMs = math.MaxInt64 / int64(time.Millisecond)
	for i, a := range args {
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil || i == 0 {
			continue
		}
		switch strings.ToLower(args[i-1]) {
		case "pxat":
			return n > maxMs
		case "exat":
			return n > maxMs/1000
		}
		switch args[0] {
		case "pexpireat":
			return n > maxMs
		case "expireat":
			return n > maxMs/1000
		}
	}
	return false
}
