package resp_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

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
