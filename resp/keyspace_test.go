package resp_test

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/resp"
)

// TestSwapDBMatchesRedis replays SWAPDB's cases from Redis's own tests on
// both servers: the databases exchange keys and deadlines, a WATCHed key
// that exists in either database is touched (EXEC aborts), and WATCH keeps
// the database a key was watched in.
func TestSwapDBMatchesRedis(t *testing.T) {
	redisAddr, nxkvAddr, _ := startPair(t, resp.Options{})
	for _, steps := range [][]string{
		{"flushall", "select 0", "set x 30", "watch x", "swapdb 0 1", "multi", "ping", "exec"},
		{"flushall", "select 1", "set x 30", "select 0", "watch x", "swapdb 0 1", "multi", "ping", "exec"},
		{"flushall", "select 2", "watch y", "swapdb 2 3", "multi", "ping", "exec"},
		{"flushall", "select 0", "set a 1 px 100000", "set b 2", "select 1", "set b 3", "swapdb 1 0",
			"get b", "get a", "pttl a", "select 0", "get b", "exists a", "dbsize", "select 1", "dbsize", "swapdb 1 1", "dbsize"},
		{"flushall", "select 5", "set x 30", "watch x", "select 1", "set x 10", "select 5", "multi", "ping", "exec"},
		{"flushall", "set k v", "multi", "swapdb 0 9", "get k", "select 9", "get k", "exec"},
		{"flushall", "set k v", "eval", "swapdb 0 x", "swapdb 0 -1", "randomkey", "select 0"},
	} {
		var st []step
		for _, line := range steps {
			args := strings.Fields(line)
			if line == "eval" {
				args = []string{"eval", "redis.call('swapdb', 0, 3) return redis.call('randomkey')", "0"}
			}
			st = append(st, step{args: args, tol: 200})
		}
		if d := diff(t, redisAddr, nxkvAddr, st, false); d != "" {
			t.Errorf("%s", d)
		}
	}
}

// TestSwapDBMovesCallersEngine shows SWAPDB on a server over the caller's
// engine: the engine is database 0 for Go code too, so its keys move out
// to database 1 and database 1's come in, deadlines kept, and a Go watcher
// of a moved key fires.
func TestSwapDBMovesCallersEngine(t *testing.T) {
	e := engine.New(engine.Options{})
	defer e.Close()
	s := resp.NewT(t, resp.Options{Engine: e})
	if err := e.SetPX("lock", "tok", time.Hour); err != nil {
		t.Fatal(err)
	}
	changed, stop := e.Watch("lock")
	defer stop()
	s.DB(1).Set("other", "v")
	c := dialRaw(t, s.Addr())
	if r, err := c.do([]string{"swapdb", "0", "1"}); err != nil || string(r) != "+OK\r\n" {
		t.Fatalf("SWAPDB: %q %v", r, err)
	}
	if _, ok := e.Get("lock"); ok {
		t.Error("the caller's engine still holds the key swapped out")
	}
	if v, ok := e.Get("other"); !ok || v != "v" {
		t.Errorf("the caller's engine: other = %q, %v; want v", v, ok)
	}
	if ttl, ok := s.DB(1).PTTL("lock"); !ok || ttl <= 59*time.Minute {
		t.Errorf("database 1: lock's TTL = %v, %v; want about an hour", ttl, ok)
	}
	select {
	case <-changed:
	default:
		t.Error("the watcher of the moved key did not fire")
	}
}

// TestLCSMatchesRedis compares LCS on random strings over small alphabets
// (so that subsequences are long and runs many) with every option, in RESP2
// and RESP3.
func TestLCSMatchesRedis(t *testing.T) {
	redisAddr, nxkvAddr, _ := startPair(t, resp.Options{})
	r := rand.New(rand.NewPCG(3, 4))
	word := func() string {
		alpha := "ACGT"[:1+r.IntN(4)]
		b := make([]byte, r.IntN(60))
		for i := range b {
			b[i] = alpha[r.IntN(len(alpha))]
		}
		return string(b)
	}
	options := [][]string{nil, {"len"}, {"idx"}, {"idx", "withmatchlen"}, {"idx", "minmatchlen", "3"},
		{"IDX", "MINMATCHLEN", "2", "WITHMATCHLEN"}, {"len", "idx"}, {"minmatchlen"}, {"idx", "minmatchlen", "-5"}}
	for i := range 200 {
		steps := []step{{args: []string{"set", "a", word()}}, {args: []string{"set", "b", word()}}}
		if i%10 == 0 {
			steps = append(steps, step{args: []string{"del", "b"}})
		}
		for _, o := range options {
			steps = append(steps, step{args: append([]string{"lcs", "a", "b"}, o...)})
		}
		if d := diff(t, redisAddr, nxkvAddr, steps, i%2 == 1); d != "" {
			t.Fatalf("%s", d)
		}
	}
}

// TestScriptDeadlineAtItsOwnTime sets, from a script, a deadline equal to
// the script's own TIME in milliseconds: Redis counts time in
// milliseconds, so the key lives on with PTTL 0 for the rest of the
// script; it used to be gone at once, compared with a nanosecond clock.
// Fifty runs land at every offset within a millisecond. (Only SET PXAT is
// compared: Redis 7.0's TIME in a script is the live clock, a millisecond
// or more after the script's frozen time now and then, which changes what
// PEXPIREAT and GETEX PXAT of that time do there; TestDeadlineMilliseconds
// covers them on a fake clock.)
func TestScriptDeadlineAtItsOwnTime(t *testing.T) {
	redisAddr, nxkvAddr, _ := startPair(t, resp.Options{})
	src := "local t = redis.call('TIME') local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) " +
		"redis.call('SET', KEYS[1], 'v', 'PXAT', ms) return {redis.call('EXISTS', KEYS[1]), redis.call('PTTL', KEYS[1]), redis.call('TTL', KEYS[1])}"
	for i := range 50 {
		steps := []step{{args: []string{"eval", src, "1", "k"}}, {args: []string{"del", "k"}, skip: true}}
		if d := diff(t, redisAddr, nxkvAddr, steps, i%2 == 1); d != "" {
			t.Fatalf("%s", d)
		}
	}
}

// TestDeadlineMilliseconds checks millisecond deadlines against a fake
// clock standing half a millisecond into a millisecond: a deadline of the
// current millisecond keeps a key written by SET (PTTL 0) and deletes one
// given it by PEXPIREAT or GETEX (Redis's checkAlreadyExpired), and PTTL
// counts whole milliseconds as Redis does.
func TestDeadlineMilliseconds(t *testing.T) {
	clk := clock.NewMock()
	start := time.Date(2026, 11, 27, 9, 0, 0, 500_000, time.UTC) // 0.5 ms into a millisecond
	clk.Set(start)
	s := resp.NewT(t, resp.Options{Clock: clk})
	c := dialRaw(t, s.Addr())
	ms := strconv.FormatInt(start.UnixMilli(), 10)
	next := strconv.FormatInt(start.UnixMilli()+1, 10)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"set", "k", "v", "pxat", ms}, "+OK\r\n"},
		{[]string{"pttl", "k"}, ":0\r\n"},
		{[]string{"exists", "k"}, ":1\r\n"},
		{[]string{"pexpireat", "k", ms}, ":1\r\n"},
		{[]string{"exists", "k"}, ":0\r\n"},
		{[]string{"set", "k", "v"}, "+OK\r\n"},
		{[]string{"getex", "k", "pxat", ms}, "$1\r\nv\r\n"},
		{[]string{"exists", "k"}, ":0\r\n"},
		{[]string{"set", "k", "v"}, "+OK\r\n"},
		{[]string{"getex", "k", "pxat", next}, "$1\r\nv\r\n"},
		{[]string{"pttl", "k"}, ":1\r\n"},
		{[]string{"pexpiretime", "k"}, ":" + next + "\r\n"},
		{[]string{"set", "j", "v", "px", "100"}, "+OK\r\n"},
		{[]string{"pttl", "j"}, ":100\r\n"},
	} {
		if got, err := c.do(tc.args); err != nil || string(got) != tc.want {
			t.Errorf("%q = %q, %v; want %q", tc.args, got, err, tc.want)
		}
	}
	clk.Add(time.Millisecond) // now 1.5 ms in: k's deadline millisecond is current
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"exists", "k"}, ":1\r\n"},
		{[]string{"pttl", "k"}, ":0\r\n"},
		{[]string{"pttl", "j"}, ":99\r\n"},
	} {
		if got, err := c.do(tc.args); err != nil || string(got) != tc.want {
			t.Errorf("after 1 ms: %q = %q, %v; want %q", tc.args, got, err, tc.want)
		}
	}
	clk.Add(time.Millisecond)
	if got, _ := c.do([]string{"exists", "k"}); string(got) != ":0\r\n" {
		t.Errorf("a millisecond past its deadline, EXISTS = %q; want 0", got)
	}
}
