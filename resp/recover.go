package resp

// This file contains a command that panics, as net/http contains a handler
// that does: the panic is recovered, the engine sections the command held
// are released on the way out (engine.Update unlocks in a deferred call),
// the stack is logged, the panic is counted, the client gets an error and
// its connection is closed, and every other client is served as before.
// It also keeps the error counts of INFO errorstats.

import (
	"fmt"
	"log"
	"runtime/debug"
	"strings"
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

// maxErrorKinds is how many different error codes INFO errorstats counts
// before it stops, as Redis's ERROR_STATS_NUMBER.
const maxErrorKinds = 128

// errorStats counts error replies by their code (the first word: ERR,
// WRONGTYPE, NOSCRIPT, ...) for INFO errorstats and total_error_replies.
type errorStats struct {
	total    atomic.Int64
	mu       sync.Mutex
	byCode   map[string]int64 // guarded by mu
	disabled bool             // guarded by mu: past maxErrorKinds codes
}

// count records one error reply whose text is msg.
func (es *errorStats) count(msg string) {
	es.total.Add(1)
	code := msg
	if i := strings.IndexByte(msg, ' '); i >= 0 {
		code = msg[:i]
	}
	es.mu.Lock()
	defer es.mu.Unlock()
	if es.disabled {
		return
	}
	if _, ok := es.byCode[code]; !ok {
		if es.byCode == nil {
			es.byCode = map[string]int64{}
		}
		if len(es.byCode) >= maxErrorKinds {
			// As Redis: stop adding codes, so a client inventing error
			// texts (error_reply from scripts) cannot grow the table.
			es.byCode = map[string]int64{"ERRORSTATS_DISABLED": 1}
			es.disabled = true
			return
		}
	}
	es.byCode[code]++
}

// snapshot returns the counts by code.
func (es *errorStats) snapshot() map[string]int64 {
	es.mu.Lock()
	defer es.mu.Unlock()
	out := make(map[string]int64, len(es.byCode))
	for k, v := range es.byCode {
		out[k] = v
	}
	return out
}

// reset clears the counts (CONFIG RESETSTAT).
func (es *errorStats) reset() {
	es.mu.Lock()
	defer es.mu.Unlock()
	es.byCode = nil
	es.disabled = false
	es.total.Store(0)
}

// Stats are counters of a Server since it started (Commands and
// ErrorReplies since the last CONFIG RESETSTAT, as in INFO).
type Stats struct {
	// Connections is the number of connections accepted.
	Connections int64
	// Commands is the number of commands run, those inside transactions
	// and scripts included.
	Commands int64
	// ErrorReplies is the number of error replies sent to clients.
	ErrorReplies int64
	// Panics is the number of commands that panicked: each was contained
	// (logged, its client's connection closed) and is a defect of nxkv.
	Panics int64
}

// Stats returns the server's counters. It is safe for concurrent use.
func (s *Server) Stats() Stats {
	return Stats{
		Connections:  s.conns0.Load(),
		Commands:     s.commands.Load(),
		ErrorReplies: s.errs.total.Load(),
		Panics:       s.panics.total.Load(),
	}
}

// testPanicHook, set only by the package's own tests (export_test.go)
// before any server starts, sees every panic as it is recorded, so that a
// panic fails the package's tests instead of only closing a connection.
var testPanicHook func(p *commandPanic)
