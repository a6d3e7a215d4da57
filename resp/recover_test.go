package resp_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"strings"
	"sync"
	"testing"

	"github.com/nxkv/nxkv/internal/redistest"
	"github.com/nxkv/nxkv/resp"
)

// syncBuffer is a bytes.Buffer safe for the server's goroutines to log to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// closedAfter reports whether the server closed c: the next command gets
// no reply.
func closedAfter(c *rawConn) bool {
	_, err := c.do([]string{"ping"})
	return err != nil
}

// TestPanicContained plants a command that panics while holding its key's
// engine section, and runs it on its own, inside MULTI/EXEC and from a Lua
// script (where the interpreter would otherwise turn the panic into a
// script error), over TCP (an event loop on Linux) and over an in-memory
// connection (a goroutine). Each time the client gets an error and its
// connection closes, the section is released (another client writes the
// key at once), the engine's invariants hold, the panic is counted and
// logged (the stack once per command), and other clients are served
// throughout.
func TestPanicContained(t *testing.T) {
	s, logs := loggingServer(t)
	dials := transports(t, s)
	other := dialRaw(t, s.Addr()) // a bystander, connected throughout
	want := "-ERR internal error in 'nxkv-test-panic' command: the server logged it and closes this connection\r\n"
	panics := int64(0)
	for _, transport := range []string{"tcp", "memory"} {
		for _, tc := range []struct {
			name  string
			steps [][]string
			reply string // the reply to the last step
		}{
			{"alone", [][]string{{"nxkv-test-panic", "k"}}, want},
			{"in EXEC", [][]string{{"multi"}, {"set", "j", "1"}, {"nxkv-test-panic", "k"}, {"exec"}}, want},
			{"from Lua", [][]string{{"eval", "return redis.call('nxkv-test-panic', KEYS[1])", "1", "k"}},
				strings.TrimSuffix(want, "\r\n") + " script: "},
			{"from Lua under pcall", [][]string{{"eval", "local r = redis.pcall('nxkv-test-panic', KEYS[1]) return r.err", "1", "k"}},
				"$"},
		} {
			t.Run(transport+"/"+tc.name, func(t *testing.T) {
				c := dials[transport]()
				if r, err := c.do([]string{"set", "k", "before"}); err != nil || string(r) != "+OK\r\n" {
					t.Fatalf("SET: %q %v", r, err)
				}
				var r []byte
				for _, st := range tc.steps {
					var err error
					if r, err = c.do(st); err != nil {
						t.Fatalf("%q: %v", st, err)
					}
				}
				if !strings.HasPrefix(string(r), tc.reply) {
					t.Errorf("reply %q, want it to begin %q", r, tc.reply)
				}
				if strings.HasPrefix(tc.reply, "$") && !strings.Contains(string(r), "internal error") {
					t.Errorf("pcall returned %q, want the internal error's text", r)
				}
				if !closedAfter(c) {
					t.Error("the connection stayed open after the panic")
				}
				panics++
				if got := s.Stats().Panics; got != panics {
					t.Errorf("Stats().Panics = %d, want %d", got, panics)
				}
				// The section is released: the bystander writes the key.
				for _, st := range [][]string{{"set", "k", "after"}, {"get", "k"}} {
					if r, err := other.do(st); err != nil || strings.HasPrefix(string(r), "-") {
						t.Fatalf("bystander %q: %q %v", st, r, err)
					}
				}
				if err := s.Engine().Verify(); err != nil {
					t.Fatalf("engine invariants after the panic: %v", err)
				}
				fresh := dials[transport]()
				if r, err := fresh.do([]string{"ping"}); err != nil || string(r) != "+PONG\r\n" {
					t.Fatalf("a new client after the panic: %q %v", r, err)
				}
			})
		}
	}
	if n := strings.Count(logs.String(), "runtime/debug.Stack()"); n != 1 {
		t.Errorf("%d stacks logged, want 1 (the first panic of the command):\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), "command 'nxkv-test-panic' panicked: "+resp.PlantedPanic); n != int(panics) {
		t.Errorf("%d panics logged, want %d:\n%s", n, panics, logs.String())
	}
	info, err := other.do([]string{"info", "errorstats"})
	if err != nil || !strings.Contains(string(info), "errorstat_ERR:count=") {
		t.Errorf("INFO errorstats = %q %v, want an ERR count", info, err)
	}
}

// loggingServer starts a server that logs to the returned buffer, closed
// when the test ends.
func loggingServer(t *testing.T) (*resp.Server, *syncBuffer) {
	logs := &syncBuffer{}
	s := resp.New(resp.Options{ErrorLog: log.New(logs, "", 0)})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, logs
}

// transports returns dialers of s over TCP (an event loop on Linux) and
// over an in-memory connection (a goroutine).
func transports(t *testing.T, s *resp.Server) map[string]func() *rawConn {
	return map[string]func() *rawConn{
		"tcp": func() *rawConn { return dialRaw(t, s.Addr()) },
		"memory": func() *rawConn {
			nc, err := s.Dial(context.Background(), "", "")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { nc.Close() })
			return &rawConn{redistest.NewConn(nc)}
		},
	}
}

// TestPanicFailsNewT shows that a test using NewT fails when a command
// panicked in its server, so a contained panic is never silently passed
// over.
func TestPanicFailsNewT(t *testing.T) {
	ft := &fakeTB{}
	s := resp.NewT(ft, resp.Options{ErrorLog: log.New(io.Discard, "", 0)})
	c := dialRaw(t, s.Addr())
	if r, _ := c.do([]string{"nxkv-test-panic", "k"}); !strings.HasPrefix(string(r), "-ERR internal error") {
		t.Fatalf("reply %q", r)
	}
	ft.cleanup()
	if len(ft.errors) != 1 || !strings.Contains(ft.errors[0], "1 command(s) panicked") {
		t.Fatalf("NewT reported %q, want one error naming the panic", ft.errors)
	}
}

// fakeTB records what NewT reports.
type fakeTB struct {
	cleanups []func()
	errors   []string
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

func (f *fakeTB) cleanup() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

// TestLuaBuiltinPanicContained plants a Go function of the Lua runtime
// that panics, and calls it from scripts, directly and under pcall (which
// must not catch it: the write after the pcall does not happen), with EVAL
// and EVALSHA, over TCP and in memory. Each time the client gets the
// internal error of its command, its connection closes, the panic is
// counted and logged (the stack once), the engine's invariants hold and
// other clients are served; and the next script runs as before.
func TestLuaBuiltinPanicContained(t *testing.T) {
	s, logs := loggingServer(t)
	defer resp.PlantLuaPanic(s, "nxkv_test_panic")()
	dials := transports(t, s)
	other := dialRaw(t, s.Addr())
	const under = "local ok, e = pcall(nxkv_test_panic) redis.call('SET', KEYS[1], 'after') return e"
	sha, err := other.do([]string{"script", "load", under})
	if err != nil || sha[0] != '$' {
		t.Fatalf("SCRIPT LOAD: %q %v", sha, err)
	}
	panics := int64(0)
	for _, transport := range []string{"tcp", "memory"} {
		for _, tc := range []struct {
			name string
			cmd  []string
		}{
			{"eval", []string{"eval", "return nxkv_test_panic()", "1", "k"}},
			{"eval", []string{"eval", under, "1", "k"}},
			{"evalsha", []string{"evalsha", strings.Fields(string(sha))[1], "1", "k"}},
			{"eval_ro", []string{"eval_ro", "return {pcall(nxkv_test_panic)}", "1", "k"}},
		} {
			t.Run(transport+"/"+tc.cmd[1][:min(len(tc.cmd[1]), 20)], func(t *testing.T) {
				c := dials[transport]()
				if r, err := c.do([]string{"set", "k", "before"}); err != nil || string(r) != "+OK\r\n" {
					t.Fatalf("SET: %q %v", r, err)
				}
				r, err := c.do(tc.cmd)
				if err != nil {
					t.Fatal(err)
				}
				want := "-ERR internal error in '" + tc.name + "' command: the server logged it and closes this connection\r\n"
				if string(r) != want {
					t.Errorf("reply %q, want %q", r, want)
				}
				if !closedAfter(c) {
					t.Error("the connection stayed open after the panic")
				}
				panics++
				if got := s.Stats().Panics; got != panics {
					t.Errorf("Stats().Panics = %d, want %d", got, panics)
				}
				if r, err := other.do([]string{"get", "k"}); err != nil || string(r) != "$6\r\nbefore\r\n" {
					t.Errorf("bystander GET k = %q %v, want the value from before the script", r, err)
				}
				if err := s.Engine().Verify(); err != nil {
					t.Fatalf("engine invariants after the panic: %v", err)
				}
				fresh := dials[transport]()
				if r, err := fresh.do([]string{"eval", "return redis.call('GET', KEYS[1])", "1", "k"}); err != nil ||
					string(r) != "$6\r\nbefore\r\n" {
					t.Fatalf("a new client's script after the panic: %q %v", r, err)
				}
			})
		}
	}
	if n := strings.Count(logs.String(), "runtime/debug.Stack()"); n != 3 {
		t.Errorf("%d stacks logged, want 3 (the first panic of eval, evalsha and eval_ro):\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), "lua builtin nxkv_test_panic: "+resp.PlantedPanic); n != int(panics) {
		t.Errorf("%d panics logged, want %d:\n%s", n, panics, logs.String())
	}
}
