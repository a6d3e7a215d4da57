package resp_test

// The differential test's typed commands: hashes, lists, sets, sorted sets
// and the blocking pops, drawn on the same few keys as the string commands
// so that every command meets every type (WRONGTYPE), and the multi-client
// comparison of blocking pops.

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nxkv/nxkv/internal/redistest"
	"github.com/nxkv/nxkv/resp"
)

func (g *gen) field() string { return g.pick("f1", "f2", "f3", "1", "") }

// member returns set and sorted-set members: integers (intsets) and
// strings.
func (g *gen) member() string { return g.pick("1", "2", "10", "-3", "a", "b", "01", "") }

func (g *gen) score() string {
	return g.pick("1", "2", "1.5", "-1", "0", "inf", "-inf", "+inf", "1e300", "0.1", "x", "nan", "3.0")
}

// scoreBound returns a ZRANGEBYSCORE bound, maybe exclusive.
func (g *gen) scoreBound() string {
	b := g.pick("1", "2", "-inf", "+inf", "1.5", "0", "x", "")
	if g.r.IntN(3) == 0 {
		b = "(" + b
	}
	return b
}

func (g *gen) lexBound() string {
	return g.pick("-", "+", "[a", "(a", "[b", "(1", "[10", "a", "[", "(")
}

// blockTimeout is a blocking pop's timeout: short (an empty key replies
// nil after it on both servers), or a bad one.
func (g *gen) blockTimeout() string { return g.pick("0.01", "0.02", "-1", "x", "0.01", "1e400") }

// typedStep returns a command of a typed value.
func (g *gen) typedStep() step {
	k, k2 := g.key(), g.key()
	s := func(args ...string) step { return step{args: args} }
	switch g.r.IntN(64) {
	// Hashes.
	case 0, 1:
		args := []string{g.pick("hset", "hmset", "hset"), k}
		for range 1 + g.r.IntN(3) {
			args = append(args, g.field(), g.val())
		}
		if g.r.IntN(8) == 0 {
			args = args[:len(args)-1]
		}
		return s(args...)
	case 2:
		return s("hsetnx", k, g.field(), g.val())
	case 3:
		return s(g.pick("hget", "hexists", "hstrlen"), k, g.field())
	case 4:
		return s("hmget", k, g.field(), g.field())
	case 5:
		return s("hdel", k, g.field(), g.field())
	case 6:
		return s(g.pick("hlen", "hkeys", "hvals", "hgetall"), k)
	case 7:
		return s("hincrby", k, g.field(), g.bound("1", "-5", "x", "100"))
	case 8:
		return s("hincrbyfloat", k, g.field(), g.pick("0.1", "-1.5", "x", "inf", "1e308", "3"))
	case 9:
		return step{args: []string{"hscan", k, "0", "count", g.pick("1", "10")}, scanKey: true}
	case 10:
		switch g.r.IntN(3) {
		case 0:
			return step{args: []string{"hrandfield", k}, nullness: true}
		case 1:
			// The whole hash, in its order: a hash table's differs.
			if g.r.IntN(2) == 0 {
				return step{args: []string{"hrandfield", k, g.pick("100", "0", "-9223372036854775808", "x")}, sorted: true}
			}
			return step{args: []string{"hrandfield", k, g.pick("100", "0", "x"), g.pick("withvalues", "WITHVALUES")}, shape: true}
		}
		return step{args: []string{"hrandfield", k, g.pick("-3", "2", "-1"), "withvalues"}, shape: true}
	// Lists.
	case 11, 12:
		args := []string{g.pick("lpush", "rpush", "lpushx", "rpushx"), k}
		for range 1 + g.r.IntN(3) {
			args = append(args, g.pick("a", "b", "c", "1", ""))
		}
		return s(args...)
	case 13:
		args := []string{g.pick("lpop", "rpop"), k}
		if g.r.IntN(2) == 0 {
			args = append(args, g.bound("0", "1", "2", "10", "x", "-1"))
		}
		return s(args...)
	case 14:
		return s("lrange", k, g.bound("0", "1", "-1", "-2"), g.bound("-1", "0", "2", "-100"))
	case 15:
		return s(g.pick("llen", "llen"), k)
	case 16:
		return s("lindex", k, g.bound("0", "1", "-1", "5", "x"))
	case 17:
		return s("lset", k, g.bound("0", "-1", "3", "x"), g.val())
	case 18:
		return s("linsert", k, g.pick("before", "after", "x"), g.pick("a", "b", "z"), g.val())
	case 19:
		return s("lrem", k, g.bound("0", "1", "-1", "2", "x"), g.pick("a", "b", "1"))
	case 20:
		return s("ltrim", k, g.bound("0", "1", "-1"), g.bound("-1", "0", "1", "-2"))
	case 21:
		args := []string{"lpos", k, g.pick("a", "b", "1")}
		for range g.r.IntN(3) {
			args = append(args, g.pick("rank", "count", "maxlen", "foo"), g.bound("1", "-1", "0", "2", "x"))
		}
		return s(args...)
	case 22:
		if g.r.IntN(3) == 0 {
			return s("rpoplpush", k, k2)
		}
		return s("lmove", k, k2, g.pick("left", "right", "up"), g.pick("left", "right"))
	case 23:
		args := []string{"lmpop", g.bound("1", "2", "0", "3"), k, k2, g.pick("left", "right", "x")}
		if g.r.IntN(2) == 0 {
			args = append(args, "count", g.bound("1", "2", "0", "x"))
		}
		return s(args...)
	// Sets.
	case 24, 25:
		args := []string{"sadd", k}
		for range 1 + g.r.IntN(3) {
			args = append(args, g.member())
		}
		return s(args...)
	case 26:
		return s("srem", k, g.member(), g.member())
	case 27:
		return s(g.pick("sismember", "smismember"), k, g.member())
	case 28:
		return s("scard", k)
	case 29:
		return step{args: []string{"smembers", k}, sorted: true}
	case 30:
		return step{args: []string{g.pick("sinter", "sunion", "sdiff"), k, k2, g.key()}, sorted: true}
	case 31:
		return s(g.pick("sinterstore", "sunionstore", "sdiffstore"), k, k2, g.key())
	case 32:
		args := []string{"sintercard", g.bound("1", "2", "0", "5"), k, k2}
		if g.r.IntN(2) == 0 {
			args = append(args, "limit", g.bound("0", "1", "-1"))
		}
		return s(args...)
	case 33:
		return s("smove", k, k2, g.member())
	case 34:
		switch g.r.IntN(4) {
		case 0:
			return step{args: []string{"srandmember", k}, nullness: true}
		case 1:
			return step{args: []string{"srandmember", k, g.pick("-2", "2", "-1")}, shape: true}
		case 2:
			return step{args: []string{"srandmember", k, g.pick("100", "0", "x", "-9223372036854775808")}, sorted: true}
		}
		return step{args: []string{"spop", k, g.pick("100", "0", "-1", "x")}, sorted: true}
	case 35:
		return step{args: []string{"sscan", k, "0", "count", g.pick("1", "10")}, scanKey: true}
	// Sorted sets.
	case 36, 37, 38:
		args := []string{"zadd", k}
		for range g.r.IntN(3) {
			args = append(args, g.pick("nx", "xx", "gt", "lt", "ch", "incr"))
		}
		for range 1 + g.r.IntN(3) {
			args = append(args, g.score(), g.member())
		}
		return s(args...)
	case 39:
		return s("zincrby", k, g.score(), g.member())
	case 40:
		return s("zrem", k, g.member(), g.member())
	case 41:
		return s(g.pick("zscore", "zrank", "zrevrank"), k, g.member())
	case 42:
		return s("zmscore", k, g.member(), g.member())
	case 43:
		return s("zcard", k)
	case 44:
		return s("zcount", k, g.scoreBound(), g.scoreBound())
	case 45:
		return s("zlexcount", k, g.lexBound(), g.lexBound())
	case 46:
		args := []string{"zrange", k}
		switch g.r.IntN(3) {
		case 0:
			args = append(args, g.bound("0", "1", "-1"), g.bound("-1", "2", "0"))
		case 1:
			args = append(args, g.scoreBound(), g.scoreBound(), "byscore")
		default:
			args = append(args, g.lexBound(), g.lexBound(), "bylex")
		}
		for range g.r.IntN(3) {
			switch g.r.IntN(4) {
			case 0:
				args = append(args, "limit", g.bound("0", "1", "-1"), g.bound("1", "-1", "2"))
			default:
				args = append(args, g.pick("rev", "withscores", "byscore", "foo"))
			}
		}
		return s(args...)
	case 47:
		cmd := g.pick("zrevrange", "zrangebyscore", "zrevrangebyscore", "zrangebylex", "zrevrangebylex")
		args := []string{cmd, k}
		switch {
		case strings.HasSuffix(cmd, "lex"):
			args = append(args, g.lexBound(), g.lexBound())
		case strings.HasSuffix(cmd, "score"):
			args = append(args, g.scoreBound(), g.scoreBound())
		default:
			args = append(args, g.bound("0", "-1", "1"), g.bound("-1", "0", "2"))
		}
		for range g.r.IntN(2) {
			if g.r.IntN(2) == 0 {
				args = append(args, "limit", g.bound("0", "1"), g.bound("1", "-1"))
			} else {
				args = append(args, g.pick("withscores", "rev"))
			}
		}
		return s(args...)
	case 48:
		args := []string{"zrangestore", k2, k, g.scoreBound(), g.scoreBound(), "byscore"}
		if g.r.IntN(2) == 0 {
			args = []string{"zrangestore", k2, k, g.bound("0", "1"), g.bound("-1", "1")}
		}
		return s(args...)
	case 49:
		cmd := g.pick("zremrangebyscore", "zremrangebyrank", "zremrangebylex")
		switch cmd {
		case "zremrangebyscore":
			return s(cmd, k, g.scoreBound(), g.scoreBound())
		case "zremrangebylex":
			return s(cmd, k, g.lexBound(), g.lexBound())
		}
		return s(cmd, k, g.bound("0", "1", "-1"), g.bound("-1", "0", "1"))
	case 50:
		args := []string{g.pick("zpopmin", "zpopmax"), k}
		if g.r.IntN(2) == 0 {
			args = append(args, g.bound("0", "1", "2", "x", "-1"))
		}
		return s(args...)
	case 51:
		args := []string{"zmpop", g.bound("1", "2", "0"), k, k2, g.pick("min", "max", "x")}
		if g.r.IntN(2) == 0 {
			args = append(args, "count", g.bound("1", "2", "0"))
		}
		return s(args...)
	case 52:
		store := g.r.IntN(2) == 0
		op := g.pick("zunion", "zinter", "zdiff")
		args := []string{op}
		if store {
			args = []string{op + "store", g.key()}
		}
		args = append(args, g.bound("2", "1", "0", "3"), k, k2)
		for range g.r.IntN(3) {
			switch g.r.IntN(4) {
			case 0:
				args = append(args, "weights", g.pick("1", "2", "-1", "x"), g.pick("1", "0.5", "inf"))
			case 1:
				args = append(args, "aggregate", g.pick("sum", "min", "max", "foo"))
			default:
				args = append(args, g.pick("withscores", "foo"))
			}
		}
		return s(args...)
	case 53:
		args := []string{"zintercard", g.bound("2", "1", "0"), k, k2}
		if g.r.IntN(2) == 0 {
			args = append(args, "limit", g.bound("0", "1", "-1"))
		}
		return s(args...)
	case 54:
		switch g.r.IntN(3) {
		case 0:
			return step{args: []string{"zrandmember", k}, nullness: true}
		case 1:
			return s("zrandmember", k, g.pick("100", "0", "x"), g.pick("withscores", "foo"))
		}
		return step{args: []string{"zrandmember", k, g.pick("-3", "-1", "2"), "withscores"}, shape: true}
	case 55:
		return step{args: []string{"zscan", k, "0", "count", g.pick("1", "10")}, scanKey: true}
	// Blocking pops: with data they serve at once; on empty keys they
	// wait a few milliseconds on both servers and reply nil.
	case 56:
		return s(g.pick("blpop", "brpop"), k, k2, g.blockTimeout())
	case 57:
		return s(g.pick("bzpopmin", "bzpopmax"), k, k2, g.blockTimeout())
	case 58:
		if g.r.IntN(2) == 0 {
			return s("brpoplpush", k, k2, g.blockTimeout())
		}
		return s("blmove", k, k2, g.pick("left", "right"), g.pick("left", "right", "x"), g.blockTimeout())
	case 59:
		if g.r.IntN(2) == 0 {
			return s("blmpop", g.blockTimeout(), g.bound("1", "2"), k, k2, g.pick("left", "right"), "count", g.pick("1", "2"))
		}
		return s("bzmpop", g.blockTimeout(), g.bound("1", "2"), k, k2, g.pick("min", "max"))
	case 60:
		return step{args: []string{"object", "encoding", k}, encoding: true}
	case 62, 63:
		args := []string{g.pick("sort", "sort", "sort_ro"), k}
		nosort, limit, store := false, false, false
		for range g.r.IntN(4) {
			switch g.r.IntN(6) {
			case 0:
				b := g.pick("k*", "nosort", "k*->f1", "x")
				nosort = true // ties among equal BY values keep the set's own order
				args = append(args, "by", b)
			case 1:
				limit = true
				args = append(args, "limit", g.bound("0", "1", "-1"), g.bound("1", "-1", "2", "0"))
			case 2:
				args = append(args, "get", g.pick("#", "k*", "k*->f1", "k*->f2", "nokey"))
			case 3:
				store = true
				args = append(args, "store", k2)
			default:
				args = append(args, g.pick("asc", "desc", "alpha", "ALPHA", "foo"))
			}
		}
		// A set's own order (BY nosort, and ties of BY) is its hash
		// table's in Redis: such replies are compared as multisets, and
		// when LIMIT picks some of them, by their shape only (a STORE
		// sorts a set first, in both).
		return step{args: args, sorted: nosort, shape: nosort && limit && !store}
	default:
		return step{args: []string{"eval", g.pick(typedScripts...), "2", k, k2, g.val()}, tol: 200}
	}
}

// typedScripts call typed commands from Lua: conversions of their replies
// and of WRONGTYPE, and the blocking pops a script may not or may call.
var typedScripts = []string{
	`return redis.call('hgetall', KEYS[1])`,
	`return redis.pcall('lpush', KEYS[1], ARGV[1])`,
	`redis.call('rpush', KEYS[2], 'x') return redis.call('lrange', KEYS[2], 0, -1)`,
	`return redis.call('zrange', KEYS[1], 0, -1, 'withscores')`,
	`return redis.pcall('zscore', KEYS[1], 'a')`,
	`local t = redis.call('smembers', KEYS[1]) table.sort(t) return t`,
	`return redis.pcall('blpop', KEYS[1], 0)`,
	`return redis.pcall('blmpop', 0, 1, KEYS[1], 'left')`,
	`return redis.pcall('bzmpop', 0, 1, KEYS[1], 'min')`,
	`redis.call('zadd', KEYS[2], 1, 'm') return redis.call('zpopmin', KEYS[2])`,
	`return redis.pcall('hincrby', KEYS[1], 'f1', 1)`,
	`return redis.call('type', KEYS[1])`,
}

// stringEncoding maps a string's OBJECT ENCODING reply to one name.
func stringEncoding(r []byte) string {
	switch string(r) {
	case "$3\r\nint\r\n", "$6\r\nembstr\r\n", "$3\r\nraw\r\n":
		return "string"
	}
	return string(r)
}

// sameShape reports whether two replies have as many lines and the same
// header.
func sameShape(a, b []byte) bool {
	ta, tb := tokens(a), tokens(b)
	return len(ta) == len(tb) && ta[0] == tb[0]
}

// scanKeyAll runs an HSCAN, SSCAN or ZSCAN from cursor 0 to the end and
// returns the sorted elements, or the first reply if it is not a page.
func scanKeyAll(c *rawConn, args []string) (string, error) {
	var items []string
	cursor := "0"
	for range 10000 {
		a := append([]string{args[0], args[1], cursor}, args[3:]...)
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
			items = append(items, t[i+1])
		}
		if cursor == "0" {
			break
		}
	}
	sort.Strings(items)
	return strings.Join(items, ","), nil
}

// TestTypedDifferentialCatchesPlantedBug shows the typed steps' comparison
// fails when nxkv's replies change: a fault makes LPUSH reply an error.
func TestTypedDifferentialCatchesPlantedBug(t *testing.T) {
	rs := redistest.Start(t)
	ns := resp.RunT(t)
	steps := []step{{args: []string{"lpush", "l", "a", "b"}}, {args: []string{"lrange", "l", "0", "-1"}}}
	if d := diff(t, rs.Addr, ns.Addr(), steps, true); d != "" {
		t.Fatalf("before planting: %s", d)
	}
	ns.InjectFault(resp.Fault{Command: "lpush", Err: "ERR planted"})
	if d := diff(t, rs.Addr, ns.Addr(), steps, true); d == "" {
		t.Fatal("diff found no difference with a planted bug")
	}
}

// blockScenario is a multi-client script: each step is a command sent on
// one connection (its reply not awaited when it blocks), and after it the
// number of clients the server must report blocked before the next step.
type blockScenario struct {
	name  string
	steps []blockStep
}

type blockStep struct {
	conn    int
	args    []string
	blocked int  // INFO blocked_clients to wait for after the step
	wait    bool // whether to wait for blocked
	noReply bool
}

// blockScenarios exercise the waiters' order, pushes from a client, a
// script and MULTI/EXEC, BLMOVE chains, timeouts, CLIENT UNBLOCK and
// closed waiters.
var blockScenarios = []blockScenario{
	{"fifo", []blockStep{
		{conn: 1, args: []string{"blpop", "q", "0"}, blocked: 1, wait: true, noReply: true},
		{conn: 2, args: []string{"blpop", "q", "0"}, blocked: 2, wait: true, noReply: true},
		{conn: 3, args: []string{"brpop", "q", "q2", "0"}, blocked: 3, wait: true, noReply: true},
		{conn: 0, args: []string{"rpush", "q", "a", "b"}, blocked: 1, wait: true},
		{conn: 0, args: []string{"rpush", "q2", "c", "d"}, blocked: 0, wait: true},
		{conn: 0, args: []string{"lrange", "q2", "0", "-1"}},
	}},
	{"multi", []blockStep{
		{conn: 1, args: []string{"blpop", "q", "0"}, blocked: 1, wait: true, noReply: true},
		{conn: 0, args: []string{"multi"}},
		{conn: 0, args: []string{"rpush", "q", "a"}},
		{conn: 0, args: []string{"lpop", "q"}},
		{conn: 0, args: []string{"rpush", "q", "b", "c"}},
		{conn: 0, args: []string{"exec"}, blocked: 0, wait: true},
		{conn: 0, args: []string{"lrange", "q", "0", "-1"}},
	}},
	{"script", []blockStep{
		{conn: 1, args: []string{"bzpopmin", "z", "0"}, blocked: 1, wait: true, noReply: true},
		{conn: 2, args: []string{"bzpopmax", "z", "0"}, blocked: 2, wait: true, noReply: true},
		{conn: 0, args: []string{"eval", "redis.call('zadd', KEYS[1], 1, 'a', 2, 'b', 3, 'c') return redis.call('zcard', KEYS[1])", "1", "z"}, blocked: 0, wait: true},
		{conn: 0, args: []string{"zrange", "z", "0", "-1", "withscores"}},
	}},
	{"blmove-chain", []blockStep{
		{conn: 1, args: []string{"blmove", "a", "b", "left", "right", "0"}, blocked: 1, wait: true, noReply: true},
		{conn: 2, args: []string{"brpoplpush", "b", "c", "0"}, blocked: 2, wait: true, noReply: true},
		{conn: 3, args: []string{"blmpop", "0", "2", "x", "c", "left", "count", "5"}, blocked: 3, wait: true, noReply: true},
		{conn: 0, args: []string{"rpush", "a", "v"}, blocked: 0, wait: true},
		{conn: 0, args: []string{"exists", "a", "b", "c"}},
	}},
	{"timeout-unblock", []blockStep{
		{conn: 1, args: []string{"blpop", "q", "0.05"}},
		{conn: 2, args: []string{"bzmpop", "0", "1", "z", "max"}, blocked: 1, wait: true, noReply: true},
		{conn: 3, args: []string{"client", "id"}},
		{conn: 0, args: []string{"client", "unblock", "999999"}},
		{conn: 0, args: []string{"rename", "nokey", "z"}},
		{conn: 0, args: []string{"zadd", "tmp", "5", "m"}},
		{conn: 0, args: []string{"rename", "tmp", "z"}, blocked: 0, wait: true},
		{conn: 0, args: []string{"exists", "z", "tmp"}},
	}},
	{"blmove-wrong-destination", []blockStep{
		{conn: 0, args: []string{"set", "t", "x"}},
		{conn: 1, args: []string{"brpoplpush", "b", "t", "0"}, blocked: 1, wait: true, noReply: true},
		{conn: 2, args: []string{"blpop", "b", "0"}, blocked: 2, wait: true, noReply: true},
		{conn: 0, args: []string{"rpush", "b", "a", "c"}, blocked: 0, wait: true},
		{conn: 0, args: []string{"lrange", "b", "0", "-1"}},
	}},
	{"wrongtype-then-push", []blockStep{
		{conn: 0, args: []string{"set", "s", "x"}},
		{conn: 1, args: []string{"blpop", "s", "q", "0"}},
		{conn: 1, args: []string{"blpop", "q", "s", "0"}},
		{conn: 1, args: []string{"blpop", "q", "0"}, blocked: 1, wait: true, noReply: true},
		{conn: 0, args: []string{"lpush", "q", "1", "2"}, blocked: 0, wait: true},
		{conn: 1, args: []string{"lrange", "q", "0", "-1"}},
	}},
}

// runBlockScenario runs sc against the server at addr over fresh
// connections, in RESP2 or RESP3, and returns what each connection
// received, in order, or why it could not.
func runBlockScenario(t *testing.T, addr string, sc blockScenario, resp3 bool) ([]string, string) {
	t.Helper()
	conns := make([]*rawConn, 4)
	got := make([]bytes.Buffer, 4)
	for i := range conns {
		conns[i] = dialRaw(t, addr)
		if resp3 {
			if _, err := conns[i].do([]string{"hello", "3"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range conns {
		if _, err := c.do([]string{"flushall"}); err != nil {
			t.Fatal(err)
		}
	}
	pending := make([]int, 4) // replies still to read per connection
	for _, st := range sc.steps {
		c := conns[st.conn]
		if st.noReply {
			if err := c.Send(st.args); err != nil {
				t.Fatal(err)
			}
			pending[st.conn]++
		} else {
			for ; pending[st.conn] > 0; pending[st.conn]-- {
				r, err := c.Read(5 * time.Second)
				if err != nil {
					t.Fatalf("%s: %v", sc.name, err)
				}
				got[st.conn].Write(r)
			}
			r, err := c.do(st.args)
			if err != nil {
				t.Fatalf("%s: %q: %v", sc.name, st.args, err)
			}
			if st.args[0] == "client" && st.args[1] == "id" {
				r = []byte("<id>")
			}
			got[st.conn].Write(r)
		}
		if st.wait && !waitBlocked(t, conns[0], st.blocked) {
			return nil, fmt.Sprintf("%s: after %q, blocked clients never reached %d", sc.name, st.args, st.blocked)
		}
	}
	for i, c := range conns {
		for ; pending[i] > 0; pending[i]-- {
			r, err := c.Read(5 * time.Second)
			if err != nil {
				t.Fatalf("%s: connection %d: %v", sc.name, i, err)
			}
			got[i].Write(r)
		}
	}
	out := make([]string, 4)
	for i := range got {
		out[i] = got[i].String()
	}
	return out, ""
}

// waitBlocked waits until the server reports n blocked clients, and
// reports whether it did.
func waitBlocked(t *testing.T, c *rawConn, n int) bool {
	t.Helper()
	want := fmt.Sprintf("blocked_clients:%d\r\n", n)
	for range 500 {
		r, err := c.do([]string{"info", "clients"})
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(r, []byte(want)) {
			return true
		}
		time.Sleep(2 * time.Millisecond) // the other clients' commands are in flight
	}
	return false
}

// TestBlockingMatchesRedisCatchesPlantedBug shows the comparison fails
// when nxkv serves waiters newest first.
func TestBlockingMatchesRedisCatchesPlantedBug(t *testing.T) {
	rs := redistest.Start(t)
	ns := resp.NewT(t, resp.Options{})
	resp.PlantLIFOWaiters(ns)
	sc := blockScenarios[0]
	want, why := runBlockScenario(t, rs.Addr, sc, false)
	if why != "" {
		t.Fatalf("redis-server: %s", why)
	}
	got, why := runBlockScenario(t, ns.Addr(), sc, false)
	if why != "" {
		t.Logf("caught: %s", why)
		return
	}
	if slices.Equal(want, got) {
		t.Fatal("the comparison found no difference with waiters served newest first")
	}
}

// TestBlockingMatchesRedis runs each scenario on redis-server and on
// nxkv-server, in RESP2 and RESP3, and compares, byte for byte, what every
// connection received.
func TestBlockingMatchesRedis(t *testing.T) {
	rs := redistest.Start(t)
	ns := resp.RunT(t)
	for _, sc := range blockScenarios {
		for _, resp3 := range []bool{false, true} {
			want, why := runBlockScenario(t, rs.Addr, sc, resp3)
			if why != "" {
				t.Fatalf("redis-server: %s", why)
			}
			got, why := runBlockScenario(t, ns.Addr(), sc, resp3)
			if why != "" {
				t.Fatalf("nxkv-server: %s", why)
			}
			for i := range want {
				if want[i] != got[i] {
					t.Errorf("%s (resp3 %v), connection %d:\nredis-server: %q\nnxkv-server:  %q", sc.name, resp3, i, want[i], got[i])
				}
			}
		}
	}
}
