package resp

// This file contains a command that panics, as net/http contains a handler
// that does: the panic is recovered, the engine sections the command held
// are released on the way out (engine.Update unlocks in a deferred call),
// the stack is logged, the panic is counted, the client gets an error and
// its connection is closed, and every other client is served as before.

import (
	"fmt"
	"log"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// commandPanic is a recovered panic of a command, once it has been logged
// and counted. A command run inside a script is recovered where the script
// calls it (the Lua runtime would otherwise turn the panic into an ordinary
// script error); the connection running the script then closes too.
type commandPanic struct {
	cmd   string
	value any
}

func (p *commandPanic) String() string {
	return fmt.Sprintf("command '%s' panicked: %v", p.cmd, p.value)
}

// panicLog counts command panics and logs each one's stack.
type panicLog struct {
	total atomic.Int64
	mu    sync.Mutex
	seen  map[string]int // guarded by mu: panics per command, to log the stack of the first of each
}

// recordPanic logs and counts a command's panic, raised with the given
// stack, and returns it as a commandPanic. A value that already is one was recorded where it was
// raised and is returned as it is. The stack of the first panic of each
// command is logged in full; later ones of the same command get one line,
// so a client repeating a failing command cannot flood the log.
func (s *Server) recordPanic(cmd string, v any, stack []byte) *commandPanic {
	if p, ok := v.(*commandPanic); ok {
		return p
	}
	p := &commandPanic{cmd: cmd, value: v}
	n := s.panics.total.Add(1)
	pl := &s.panics
	pl.mu.Lock()
	if pl.seen == nil {
		pl.seen = map[string]int{}
	}
	pl.seen[cmd]++
	first := pl.seen[cmd] == 1
	pl.mu.Unlock()
	logf := log.Printf
	if s.opts.ErrorLog != nil {
		logf = s.opts.ErrorLog.Printf
	}
	if first {
		logf("nxkv-server: %s; closing the client's connection (panic %d of the server)\n%s", p, n, stack)
	} else {
		logf("nxkv-server: %s; closing the client's connection (panic %d of the server; stack logged before)", p, n)
	}
	if testPanicHook != nil {
		testPanicHook(p)
	}
	return p
}

// runContained runs a command called by a script and reports whether it
// panicked. The Lua interpreter would recover a panic itself and make it an
// ordinary script error; so the panic is recovered and recorded here, and
// the script's client connection closes after the script's reply.
func runContained(x *call) (panicked bool) {
	defer func() {
		if v := recover(); v != nil {
			x.s.recordPanic(x.cmd.name, v, debug.Stack())
			x.c.quit = true
			panicked = true
		}
	}()
	execute(x)
	return false
}

// runQueued runs a command queued in a transaction. A panic goes on up to
// the connection (the transaction's sections unlock on the way), recorded
// here under the queued command's name rather than EXEC's.
func runQueued(x *call) {
	defer func() {
		if v := recover(); v != nil {
			panic(x.s.recordPanic(x.cmd.name, v, debug.Stack()))
		}
	}()
	execute(x)
}

// panicReply is the error a client gets from a command that panicked,
// before its connection closes.
func panicReply(cmd string) string {
	return "ERR internal error in '" + cmd + "' command: the server logged it and closes this connection"
}

// recovered ends a command that panicked on a client's connection: the
// reply it had begun (from mark on) is dropped, the error is sent, and
// the connection closes once it is written. The transaction being queued,
// if any, goes with the connection.
func (c *conn) recovered(cmd *command, mark int, v any) {
	p := c.s.recordPanic(cmd.name, v, debug.Stack())
	if mark <= len(c.w.buf) {
		c.w.buf = c.w.buf[:mark]
	}
	c.w.errorReply(panicReply(p.cmd))
	c.multi = nil
	c.quit = true
}

// testPanicHook, set only by the package's own tests (export_test.go)
// before any server starts, sees every panic as it is recorded, so that a
// panic fails the package's tests instead of only closing a connection.
var testPanicHook func(p *commandPanic)
