package resp_test

// Scripts that run past busy-reply-threshold, against redis-server: the
// BUSY replies others get, SCRIPT KILL, and transactions caught in it.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nxkv/nxkv/internal/redistest"
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
// client gets Redis's error, even from inside pcall), NOTBUSY when none is
// busy, and CONFIG's errors.
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
			do(other, "unwatch")
			do(other, "config", "get", "lua-time-limit")
			do(poll, "script", "kill")
			return busy + read(script)
		},
		"over maxmemory": func(do func(*rawConn, ...string), script, poll, other *rawConn) string {
			// While busy, maxmemory is not checked (Redis skips it inside a
			// yielding long command): a write gets BUSY, not OOM.
			do(other, "config", "set", "maxmemory", "1")
			do(other, "set", "k", "v")
			script.Send([]string{"eval", loop, "0"})
			busy := waitBusy(t, poll)
			do(other, "set", "k", "v")
			do(poll, "multi")
			do(other, "script", "kill")
			got := read(script)
			do(poll, "set", "k", "v")
			do(poll, "exec")
			do(other, "config", "set", "maxmemory", "0")
			return busy + got
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

// TestScriptUnkillableMatchesRedis: a busy script that has written cannot
// be killed (UNKILLABLE) and others still get BUSY, as in Redis. Redis
// then has only SHUTDOWN NOSAVE left; nxkv stops the script at its time
// limit (shortened here to a second).
func TestScriptUnkillableMatchesRedis(t *testing.T) {
	rs := redistest.Start(t)
	ns := resp.NewT(t, resp.Options{})
	resp.SetScriptLimit(ns, time.Second)
	var got [2]string
	for i, addr := range []string{rs.Addr, ns.Addr()} {
		script, poll, other := dialRaw(t, addr), dialRaw(t, addr), dialRaw(t, addr)
		var out strings.Builder
		do := func(c *rawConn, args ...string) {
			r, err := c.Do(args)
			if err != nil {
				t.Fatalf("%q: %v", args, err)
			}
			fmt.Fprintf(&out, "%q -> %q\n", args, r)
		}
		do(other, "config", "set", "lua-time-limit", "10")
		do(other, "set", "xx", "1")
		if err := script.Send([]string{"eval", "redis.call('incr', KEYS[1]) while true do end", "1", "xx"}); err != nil {
			t.Fatal(err)
		}
		out.WriteString(waitBusy(t, poll))
		do(other, "script", "kill")
		do(other, "get", "xx")
		do(poll, "multi")
		got[i] = out.String()
		if addr == rs.Addr {
			_, _ = other.Do([]string{"shutdown", "nosave"})
			continue
		}
		r, err := script.Read(10 * time.Second)
		if err != nil || !strings.HasPrefix(string(r), "-ERR Script killed after running for 1s") {
			t.Fatalf("the script's reply: %q %v", r, err)
		}
		if r, err := other.Do([]string{"get", "xx"}); err != nil || string(r) != "$1\r\n2\r\n" {
			t.Fatalf("GET after the script: %q %v", r, err)
		}
	}
	if got[0] != got[1] {
		t.Fatalf("redis-server:\n%s\nnxkv:\n%s", got[0], got[1])
	}
}

// TestCloseWhileScriptBusy: a server closed while a script is busy (its
// event loop handed to a new goroutine) closes every connection, the
// script's once it stops, and leaves no goroutine behind (the package's
// TestMain checks for leaks).
func TestCloseWhileScriptBusy(t *testing.T) {
	s := resp.New(resp.Options{})
	resp.SetScriptLimit(s, time.Second)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	script, poll := dialRaw(t, s.Addr()), dialRaw(t, s.Addr())
	if _, err := poll.Do([]string{"config", "set", "lua-time-limit", "10"}); err != nil {
		t.Fatal(err)
	}
	// The script's connection pipelines a command behind it.
	if err := script.Send([]string{"eval", loop, "0"}); err != nil {
		t.Fatal(err)
	}
	if err := script.Send([]string{"ping"}); err != nil {
		t.Fatal(err)
	}
	if r := waitBusy(t, poll); !strings.HasPrefix(r, "-BUSY") {
		t.Fatalf("poll got %q", r)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if r, err := poll.Read(5 * time.Second); err == nil {
		t.Fatalf("poll's connection still open after Close: %q", r)
	}
	// The script stopped; its reply may or may not have been written
	// before its connection closed, but nothing follows.
	for {
		if _, err := script.Read(5 * time.Second); err != nil {
			break
		}
	}
}

// TestPushToBusyScriptsClient: output pushed to the client whose script
// made the server busy (here an invalidation, from a write through the Go
// API to another database) waits while its event loop has handed the other
// connections to a new goroutine, and reaches the client with the script's
// reply once the script ends.
func TestPushToBusyScriptsClient(t *testing.T) {
	s := resp.NewT(t, resp.Options{})
	script, poll := dialRaw(t, s.Addr()), dialRaw(t, s.Addr())
	for _, cmd := range [][]string{{"hello", "3"}, {"client", "tracking", "on"}, {"select", "1"}, {"get", "k"}, {"select", "0"}} {
		if _, err := script.Do(cmd); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := poll.Do([]string{"config", "set", "lua-time-limit", "10"}); err != nil {
		t.Fatal(err)
	}
	if err := script.Send([]string{"eval", loop, "0"}); err != nil {
		t.Fatal(err)
	}
	if r := waitBusy(t, poll); !strings.HasPrefix(r, "-BUSY") {
		t.Fatalf("poll got %q", r)
	}
	if err := s.DB(1).Set("k", "v"); err != nil {
		t.Fatal(err)
	}
	if r, err := poll.Do([]string{"script", "kill"}); err != nil || string(r) != "+OK\r\n" {
		t.Fatalf("SCRIPT KILL: %q %v", r, err)
	}
	var got []string
	for len(got) < 2 {
		r, err := script.Read(10 * time.Second)
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		got = append(got, string(r))
	}
	all := strings.Join(got, "")
	if !strings.Contains(all, "invalidate") || !strings.Contains(all, "killed by user") {
		t.Fatalf("the script's client got %q, want the invalidation of k and the killed script's error", got)
	}
	if r, err := script.Do([]string{"ping"}); err != nil || string(r) != "+PONG\r\n" {
		t.Fatalf("PING after the script: %q %v", r, err)
	}
	// Back on the loop, an idle client is still woken by a push.
	for _, cmd := range [][]string{{"select", "1"}, {"get", "k"}} {
		if _, err := script.Do(cmd); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DB(1).Set("k", "w"); err != nil {
		t.Fatal(err)
	}
	if r, err := script.Read(10 * time.Second); err != nil || !strings.Contains(string(r), "invalidate") {
		t.Fatalf("an idle client after the script: %q %v, want the invalidation of k", r, err)
	}
}
