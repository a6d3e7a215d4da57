package resp_test

// Scripts that run past busy-reply-threshold, against redis-server: the
// BUSY replies others get, SCRIPT KILL, and transactions caught in it.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nxkv/nxkv/resp"
)

// waitBusy sends PING on c until the reply is not PONG (a script has run
// past the threshold) and returns that reply.
func waitBusy(t *testing.T, c *rawConn) string {
	t.Helper()
	for range 200_000 {
		r, err := c.Do([]string{"ping"})
		if err != nil {
			t.Fatal(err)
		}
		if string(r) != "+PONG\r\n" {
			return string(r)
		}
	}
	t.Fatal("the script never made the server busy")
	return ""
}

// busyTranscript plays one scenario on a server and returns what each
// connection received, in order.
func busyTranscript(t *testing.T, addr string, scenario func(do func(c *rawConn, args ...string), script, poll, other *rawConn)) string {
	t.Helper()
	var out strings.Builder
	script, poll, other := dialRaw(t, addr), dialRaw(t, addr), dialRaw(t, addr)
	names := map[*rawConn]string{script: "script", poll: "poll", other: "other"}
	do := func(c *rawConn, args ...string) {
		r, err := c.Do(args)
		if err != nil {
			t.Fatalf("%s %q: %v", names[c], args, err)
		}
		fmt.Fprintf(&out, "%s %q -> %q\n", names[c], args, r)
	}
	do(other, "flushall")
	do(other, "config", "set", "lua-time-limit", "10")
	do(other, "config", "get", "busy-reply-threshold")
	do(other, "set", "xx", "1")
	scenario(do, script, poll, other)
	// The busy state is over: commands run again.
	do(poll, "ping")
	do(other, "get", "xx")
	do(other, "config", "set", "busy-reply-threshold", "5000")
	return out.String()
}

// loop is a script that runs until killed.
const loop = "while true do end"

// TestScriptBusyMatchesRedis compares, with redis-server, what clients see
// while a script runs past busy-reply-threshold: BUSY for commands but
// those Redis allows, MULTI and queued commands refused (EXECABORT), EXEC
// refused while busy, SCRIPT KILL of a script that has only read (its
// client gets Redis's error, even from inside pcall), UNKILLABLE for one
// that has written, NOTBUSY when none is busy, and CONFIG's errors.
func TestScriptBusyMatchesRedis(t *testing.T) {
	redisAddr, nxkvAddr, _ := startPair(t, resp.Options{})
	read := func(c *rawConn) string {
		r, err := c.Read(10 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return string(r)
	}
	scenarios := map[string]func(do func(c *rawConn, args ...string), script, poll, other *rawConn) string{
		"kill, then a transaction with a refused command": func(do func(*rawConn, ...string), script, poll, other *rawConn) string {
			do(other, "script", "kill")
			script.Send([]string{"eval", loop, "0"})
			busy := waitBusy(t, poll)
			do(poll, "get", "xx")
			do(poll, "multi")
			do(poll, "incr", "xx")
			do(other, "script", "kill")
			got := read(script)
			do(poll, "exec")
			do(other, "script", "kill")
			return busy + got
		},
		"EXEC while busy": func(do func(*rawConn, ...string), script, poll, other *rawConn) string {
			do(other, "multi")
			do(other, "incr", "xx")
			script.Send([]string{"eval", "local f = function() while 1 do redis.call('ping') end end while 1 do pcall(f) end", "0"})
			busy := waitBusy(t, poll)
			do(other, "exec")
			do(other, "watch", "xx")
			do(other, "unwatch")
			do(other, "config", "get", "lua-time-limit")
			do(poll, "script", "kill")
			return busy + read(script)
		},
		"a script that wrote": func(do func(*rawConn, ...string), script, poll, other *rawConn) string {
			script.Send([]string{"eval", `redis.call('incr', KEYS[1])
local t = redis.call('time')
while true do
  local n = redis.call('time')
  if (n[1] - t[1]) * 1000000 + n[2] - t[2] > 300000 then break end
end
return 'done'`, "1", "xx"})
			busy := waitBusy(t, poll)
			do(other, "script", "kill")
			do(other, "get", "xx")
			return busy + read(script)
		},
		"config": func(do func(*rawConn, ...string), script, poll, other *rawConn) string {
			do(other, "config", "set", "lua-time-limit", "-1")
			do(other, "config", "set", "busy-reply-threshold", "x")
			do(other, "config", "set", "lua-time-limit", "10", "busy-reply-threshold", "20")
			do(other, "config", "get", "lua-time-limit")
			return ""
		},
	}
	for name, sc := range scenarios {
		t.Run(name, func(t *testing.T) {
			var tails [2]string
			var transcripts [2]string
			for i, addr := range []string{redisAddr, nxkvAddr} {
				transcripts[i] = busyTranscript(t, addr, func(do func(c *rawConn, args ...string), script, poll, other *rawConn) {
					tails[i] = sc(do, script, poll, other)
				})
			}
			if transcripts[0] != transcripts[1] || tails[0] != tails[1] {
				t.Fatalf("redis-server:\n%s%q\nnxkv:\n%s%q", transcripts[0], tails[0], transcripts[1], tails[1])
			}
		})
	}
}
