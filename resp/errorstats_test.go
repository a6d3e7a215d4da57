package resp_test

import (
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/nxkv/nxkv/resp"
)

// TestErrorstatsMatchesRedis compares the reply, INFO errorstats and the
// commands' failed and rejected calls with redis-server after each case: an error a command
// replies inside a script is counted once, where it is replied (whether
// pcall catches it or the script returns or raises it), the script's own
// errors when it replies them, and the code is the text before the first
// space within Redis's 32-byte window ("ERR" without one).
func TestErrorstatsMatchesRedis(t *testing.T) {
	redisAddr, nxkvAddr, _ := startPair(t, resp.Options{})
	long := strings.Repeat("Z", 40)
	cases := [][]string{
		{"eval", "return redis.pcall('nosuch')", "0"},
		{"eval", "local r = redis.pcall('nosuch') return 1", "0"},
		{"eval", "redis.pcall('incr', KEYS[1]) return 1", "1", "sk"},
		{"eval", "return redis.pcall('incr', KEYS[1])", "1", "sk"},
		{"eval", "redis.call('incr', KEYS[1]) return 1", "1", "sk"},
		{"eval", "local ok = pcall(redis.call, 'incr', KEYS[1]) return 1", "1", "sk"},
		{"eval", "local e = redis.pcall('incr', KEYS[1]) return {err = e.err}", "1", "sk"},
		{"eval", "local e = redis.pcall('incr', KEYS[1]) return e.ignore_error_stats_update", "1", "sk"},
		{"eval", "return redis.error_reply('MY err')", "0"},
		{"eval", "return {err = 'X y'}", "0"},
		{"eval", "return {err = '" + long + "'}", "0"},
		{"eval", "return {err = ' lead'}", "0"},
		{"eval", "return {err = '-X'}", "0"}, {"eval", "return {err = '--X y'}", "0"}, {"eval", "return {err = ''}", "0"},
		{"eval", "error('boom')", "0"},
		{"eval", "return redis.call('get')", "0"},
		{"eval", "return redis.pcall('set', KEYS[1], 'v', 'ex', 0)", "1", "k"},
		{"incr", "sk"},
		{"nosuch"},
		{"get"},
	}
	a, b := dialRaw(t, redisAddr), dialRaw(t, nxkvAddr)
	for _, args := range cases {
		var got [2]string
		for i, c := range []*rawConn{a, b} {
			for _, setup := range [][]string{{"set", "sk", "abc"}, {"config", "resetstat"}} {
				if _, err := c.do(setup); err != nil {
					t.Fatal(err)
				}
			}
			reply, err := c.do(args)
			if err != nil {
				t.Fatal(err)
			}
			r, err := c.do([]string{"info", "errorstats"})
			if err != nil {
				t.Fatal(err)
			}
			got[i] = string(reply) + string(r) + failedCalls(t, c)
		}
		if got[0] != got[1] {
			t.Errorf("%q:\nredis-server: %q\nnxkv-server:  %q", args, got[0], got[1])
		}
	}
}

// failedCalls returns the failed and rejected calls of every command in
// INFO commandstats, one per line, sorted.
func failedCalls(t *testing.T, c *rawConn) string {
	t.Helper()
	r, err := c.do([]string{"info", "commandstats"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(r), "\r\n") {
		name, rest, ok := strings.Cut(l, ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") || name == "cmdstat_config|resetstat" || name == "cmdstat_info" {
			continue
		}
		for _, f := range strings.Split(rest, ",") {
			if strings.HasPrefix(f, "failed_calls=") || strings.HasPrefix(f, "rejected_calls=") {
				out = append(out, name+" "+f)
			}
		}
	}
	sort.Strings(out) // the servers list commands in orders of their own
	return strings.Join(out, "\n")
}

// TestErrorstatsCapped shows nxkv's one deliberate difference from Redis
// 7.0.15 in INFO errorstats: past 128 different error codes it stops
// counting codes and shows ERRORSTATS_DISABLED, as Redis 7.2 does, so that
// clients inventing codes (error_reply from scripts) cannot grow the table
// without bound; total_error_replies goes on counting.
func TestErrorstatsCapped(t *testing.T) {
	s := resp.NewT(t, resp.Options{})
	c := dialRaw(t, s.Addr())
	for i := range 130 {
		if _, err := c.do([]string{"eval", "return redis.error_reply('E" + strconv.Itoa(i) + " x')", "0"}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := c.do([]string{"info", "errorstats"})
	if err != nil || !strings.Contains(string(r), "errorstat_ERRORSTATS_DISABLED:count=1") || strings.Contains(string(r), "errorstat_E1:") {
		t.Fatalf("INFO errorstats after 130 codes = %q, %v", r, err)
	}
	if got := s.Stats().ErrorReplies; got != 130 {
		t.Errorf("Stats().ErrorReplies = %d, want 130", got)
	}
}
